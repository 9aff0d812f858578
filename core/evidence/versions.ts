/**
 * A video's metadata and subtitle versions, each naming the kept answer behind it: what the evidence
 * bundle holds (metadata-versions.json, subtitle-versions.json), what get_evidence answers and what the
 * video page lists. One function builds them for all three.
 */
import { z } from 'zod';
import type { Queryable } from '../db/database.ts';
import { isoTimestamp } from '../db/isoTimestamp.ts';
import { TRACK_COLUMNS, type TrackInfo } from '../subtitles/tracks.ts';

/** How a record names a kept answer: its record's file, relative to the video's folder of a bundle. */
export const OBSERVATION_FILE = /^observations\/(\d{1,18})\.json$/;

const observation = z
  .string()
  .nullable()
  .describe("the kept answer behind it: observations/<id>.json (relative to the video's folder of a bundle); null when none was kept");

const metadataValues = z.object({
  title: z.string().nullable(),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  thumbnailUrl: z.string().nullable(),
});

export const metadataVersionsSchema = z.object({
  current: metadataValues
    .extend({
      observation: observation.describe(
        'the newest kept answer that filled in or changed the metadata (a Wayback capture, an archive file): what the current values were read from, unless a source that keeps no answer changed them since',
      ),
    })
    .nullable(),
  versions: z.array(
    metadataValues.extend({
      replacedAt: z.string().describe('ISO 8601, UTC: when these values stopped being current'),
      observation: observation.describe('the kept answer that made this version: the one that showed these values replaced'),
    }),
  ),
});

const subtitleVersion = z.object({
  file: z.string().describe("the version's WebVTT in a bundle: subtitles/<language>[.<track id>].<kind>.v<version>.vtt"),
  language: z.string(),
  trackId: z.string().nullable(),
  kind: z.string(),
  version: z.number().int(),
  source: z.string().describe('archive (the local yt-dlp archive), youtube or wayback: where this content was first found'),
  fetchedAt: z.string(),
  contentHash: z.string().describe('SHA-256 of the normalised cues'),
  observation: observation.describe(
    "the kept answer its cues were read from: an archive file, the platform's timedtext answer or a Wayback capture",
  ),
});
export const subtitleVersionsSchema = z.array(subtitleVersion);

export type SubtitleVersion = z.infer<typeof subtitleVersion> & { track: TrackInfo };

/** The current metadata and every version, oldest first. */
export async function metadataVersions(sql: Queryable, videoId: string): Promise<z.infer<typeof metadataVersionsSchema>> {
  const [current] = await sql<Array<NonNullable<z.infer<typeof metadataVersionsSchema>['current']>>>`
    select title, description, tags, thumbnail_url as "thumbnailUrl",
      (select 'observations/' || e.id || '.json' from evidence_observations e
        where e.video_id = v.video_id and e.decided in ('metadata_filled', 'metadata_version') order by e.id desc limit 1) as observation
    from videos v where video_id = ${videoId}`;
  const versions = await sql<z.infer<typeof metadataVersionsSchema>['versions']>`
    select v.title, v.description, v.tags, v.thumbnail_url as "thumbnailUrl", ${sql.unsafe(isoTimestamp('v.replaced_at'))} as "replacedAt",
      (select 'observations/' || e.id || '.json' from evidence_observations e where e.video_version_id = v.id order by e.id limit 1) as observation
    from video_versions v where v.video_id = ${videoId} order by v.id`;
  return { current: current ?? null, versions };
}

/** Every version of every subtitle track, in a fixed order (language, track, kind, version), with its track's facts. */
export async function subtitleVersions(sql: Queryable, videoId: string): Promise<SubtitleVersion[]> {
  const tracks = await sql<Array<TrackInfo & { observation: string | null }>>`
    select ${sql.unsafe(TRACK_COLUMNS)},
      (select 'observations/' || e.id || '.json' from evidence_observations e where e.subtitle_track_id = t.id order by e.id limit 1) as observation
    from subtitle_tracks t where t.video_id = ${videoId}
    order by t.language, t.track_id nulls first, t.kind, t.version`;
  return tracks.map(({ observation: kept, ...track }) => ({
    file: `subtitles/${track.language}${track.trackId ? `.${track.trackId}` : ''}.${track.kind}.v${track.version}.vtt`,
    language: track.language,
    trackId: track.trackId,
    kind: track.kind,
    version: track.version,
    source: track.source,
    fetchedAt: track.fetchedAt.toISOString(),
    contentHash: track.contentHash,
    observation: kept,
    track,
  }));
}

/** A version as records show it (without the track's internals). */
export const subtitleVersionRecord = ({ track: _track, ...record }: SubtitleVersion): z.infer<typeof subtitleVersion> => record;

/** The kept answers the versions name: shown with their version, not again among the other answers. */
export function namedObservations(metadata: z.infer<typeof metadataVersionsSchema>, subtitles: readonly SubtitleVersion[]): Set<string> {
  const named = [metadata.current?.observation, ...metadata.versions.map((v) => v.observation), ...subtitles.map((v) => v.observation)];
  return new Set(named.filter((name): name is string => !!name));
}
