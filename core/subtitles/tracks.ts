/**
 * Stored subtitle tracks: what they are, how the best one is chosen, and how they are read.
 * A track is (video, language, kind, track id: null but for YouTube's named tracks); it has versions, and "the track" means its newest version
 * (the view latest_subtitle_tracks) unless a version is asked for.
 */
import { z } from 'zod';
import type { Queryable } from '../db/database.ts';
import { languageTag } from '../text/languageTag.ts';
import { TRACK_ID } from '../youtube/trackName.ts';
import type { Cue, InputFormat } from './cue.ts';

export const trackKinds = ['manual', 'auto', 'translated'] as const;
export type TrackKind = (typeof trackKinds)[number];

export const trackSources = ['archive', 'youtube', 'wayback'] as const;
export type TrackSource = (typeof trackSources)[number];

/** A track language a client asks for: a BCP 47 tag (ICU's parser decides), in any case. */
export const languageParam = z
  .string()
  .max(64)
  .refine((value) => languageTag(value) !== undefined, { message: 'expected a BCP 47 language tag such as en, en-GB, pt-BR or zh-Hans' });

/** YouTube's id of a named track, as a client asks for one. */
export const trackIdParam = z.string().regex(TRACK_ID, { message: 'expected a track id of 11 characters (A-Z, a-z, 0-9, _ and -)' });

/** One stored version of a track, without its cues. */
export interface TrackInfo {
  id: string;
  videoId: string;
  /** A BCP 47 tag: en, en-GB, zh-Hans. */
  language: string;
  /** YouTube's id of a named track (one of several of its language); null for the language's unnamed track. */
  trackId: string | null;
  kind: TrackKind;
  source: TrackSource;
  format: InputFormat;
  version: number;
  cueCount: number;
  textBytes: number;
  durationMs: number;
  originalBytes: number;
  contentHash: string;
  originUrl: string | null;
  fetchedAt: Date;
  lastSeenAt: Date;
}

export const TRACK_COLUMNS = `t.id::text as id, t.video_id as "videoId", t.language, t.track_id as "trackId", t.kind, t.source, t.format, t.version,
  t.cue_count as "cueCount", t.text_bytes as "textBytes", t.duration_ms as "durationMs", t.original_bytes as "originalBytes",
  t.content_hash as "contentHash", t.origin_url as "originUrl", t.fetched_at as "fetchedAt", t.last_seen_at as "lastSeenAt"`;

const KIND_RANK: Record<TrackKind, number> = { manual: 0, auto: 1, translated: 2 };

const primary = (language: string) => language.toLowerCase().split(/[-_]/, 1)[0]!;

/** 2: the same language (case aside); 1: the same primary language (en and en-GB); 0: another one. */
function languageMatch(language: string, wanted: string): 0 | 1 | 2 {
  if (language.toLowerCase() === wanted.toLowerCase()) return 2;
  return primary(language) === primary(wanted) ? 1 : 0;
}

/** Where a language stands among the preferred ones (lower is better): exact before primary-language matches. */
function preference(language: string, preferred: readonly string[]): number {
  for (let i = 0; i < preferred.length; i++) {
    const match = languageMatch(language, preferred[i]!);
    if (match > 0) return i * 2 + (2 - match);
  }
  return preferred.length * 2;
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A language's unnamed track before its named ones, named ones by id. */
const compareTrackIds = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : compareText(a, b));

export interface TrackChoice {
  /** The language of the video (videos.language), preferred when no `lang` is asked for. */
  videoLanguage?: string | null;
  /** Only tracks in this language: the exact language first, then its regional forms (en → en-GB). */
  lang?: string;
  /** Only tracks of this kind. */
  kind?: TrackKind;
  /** Only the named track with this id. */
  trackId?: string;
}

/**
 * The best of a video's tracks (newest versions), or undefined when none fits.
 *  - With `lang`: tracks of that language only; an exact match beats a regional one, then the kind decides.
 *  - Without: the kind decides first (manual, then auto, then translated), then the language: the
 *    video's own, else English, else the first by name.
 */
export function chooseTrack<T extends Pick<TrackInfo, 'language' | 'kind'> & { trackId?: string | null }>(
  tracks: readonly T[],
  choice: TrackChoice = {},
): T | undefined {
  let candidates = tracks.filter(
    (track) => (!choice.kind || track.kind === choice.kind) && (!choice.trackId || track.trackId === choice.trackId),
  );
  if (choice.lang) {
    const wanted = choice.lang;
    candidates = candidates.filter((track) => languageMatch(track.language, wanted) > 0);
    return candidates.sort(
      (a, b) =>
        languageMatch(b.language, wanted) - languageMatch(a.language, wanted) ||
        KIND_RANK[a.kind] - KIND_RANK[b.kind] ||
        compareText(a.language, b.language) ||
        compareTrackIds(a.trackId ?? null, b.trackId ?? null),
    )[0];
  }
  const preferred = [choice.videoLanguage, 'en'].filter((language): language is string => !!language);
  return candidates.sort(
    (a, b) =>
      KIND_RANK[a.kind] - KIND_RANK[b.kind] ||
      preference(a.language, preferred) - preference(b.language, preferred) ||
      compareText(a.language, b.language) ||
      compareTrackIds(a.trackId ?? null, b.trackId ?? null),
  )[0];
}

/** The newest version of every track of these videos (no cues), by language, kind, then track id. */
export async function latestTracks(sql: Queryable, videoIds: readonly string[]): Promise<TrackInfo[]> {
  if (videoIds.length === 0) return [];
  return sql<TrackInfo[]>`
    select ${sql.unsafe(TRACK_COLUMNS)} from latest_subtitle_tracks t
    where t.video_id = any(${videoIds as string[]}::text[])
    order by t.video_id, t.language, t.kind, t.track_id nulls first`;
}

/** One version of a track (no cues). */
export async function trackVersion(
  sql: Queryable,
  videoId: string,
  track: Pick<TrackInfo, 'language' | 'trackId' | 'kind'>,
  version: number,
): Promise<TrackInfo | undefined> {
  const [row] = await sql<TrackInfo[]>`
    select ${sql.unsafe(TRACK_COLUMNS)} from subtitle_tracks t
    where t.video_id = ${videoId} and t.language = ${track.language} and t.kind = ${track.kind}
      and t.track_id is not distinct from ${track.trackId} and t.version = ${version}`;
  return row;
}

/** The cues of stored versions, by track id. */
export async function readCues(sql: Queryable, trackIds: readonly string[]): Promise<Map<string, Cue[]>> {
  if (trackIds.length === 0) return new Map();
  const rows = await sql<{ id: string; cues: Cue[] }[]>`
    select id::text as id, cues from subtitle_tracks where id = any(${trackIds as string[]}::bigint[])`;
  return new Map(rows.map((row) => [row.id, row.cues]));
}

/** How a track is shown in API answers (no ids, no hashes). */
export function describeTrack(track: TrackInfo) {
  return {
    language: track.language,
    trackId: track.trackId,
    kind: track.kind,
    source: track.source,
    format: track.format,
    version: track.version,
    cueCount: track.cueCount,
    durationMs: track.durationMs,
    textBytes: track.textBytes,
    fetchedAt: track.fetchedAt.toISOString(),
    url: `/api/subtitles/${track.videoId}?lang=${encodeURIComponent(track.language)}&kind=${track.kind}${track.trackId ? `&trackId=${track.trackId}` : ''}`,
  };
}
