/**
 * Keeps the answers behind observations that decided or confirmed something (gzip-compressed, with
 * the SHA-256 of the raw body), and counts the definite answers that changed nothing. Called in the
 * transaction that applied the observations, after it: the history rows the triggers wrote are there.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Queryable } from '../db/database.ts';
import { archiveFileAnswer, type KeptAnswer } from '../sources/keptAnswer.ts';
import type { SourceName, VideoRecord, WaybackCapture } from '../sources/types.ts';
import type { TrackInfo } from '../subtitles/tracks.ts';
import { localPath } from '../videos/localPath.ts';

/**
 * What the answer decided: a status (a first sign, the change, a later confirmation), what was kept of
 * it (the thumbnail), a metadata version (the answer that showed the values change), metadata a source filled in
 * (a Wayback capture's), or a subtitle version.
 */
type Decided = 'suspected' | 'status_change' | 'confirmation' | 'thumbnail' | 'metadata_version' | 'metadata_filled' | 'subtitle_version';

export interface DecidingObservation {
  videoId: string;
  source: string;
  said: string;
  decided: Decided;
  answer: KeptAnswer;
  wayback?: { timestamp: string; digest: string | null };
  /** The metadata version (video_versions) or subtitle version (subtitle_tracks) it produced. */
  videoVersionId?: string;
  subtitleTrackId?: string;
}

export const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export async function keepObservations(
  tx: Queryable,
  kept: DecidingObservation[],
  /** Videos whose status changed now, with when their suspicion began: their new history row is linked to the change and to that suspicion. */
  changed: Array<{ videoId: string; suspectedAt: Date | null }>,
): Promise<void> {
  if (kept.length > 0) {
    const rows = kept.map((o) => ({
      video_id: o.videoId,
      source: o.source,
      request_url: o.answer.url,
      observed_at: o.answer.answeredAt,
      http_status: o.answer.status,
      content_type: o.answer.contentType,
      decided: o.decided,
      said: o.said.slice(0, 2000),
      wayback_timestamp: o.wayback?.timestamp ?? null,
      cdx_digest: o.wayback?.digest ?? null,
      body_sha256: sha256Hex(o.answer.body),
      body_size: o.answer.body.length,
      body_gzip: gzipSync(o.answer.body),
      video_version_id: o.videoVersionId ?? null,
      subtitle_track_id: o.subtitleTrackId ?? null,
    }));
    await tx`insert into evidence_observations ${tx(rows)}`;
  }
  if (changed.length === 0) return;
  const links = JSON.stringify(changed.map((c) => ({ video_id: c.videoId, suspected_at: c.suspectedAt?.toISOString() ?? null })));
  await tx`
    update evidence_observations e set status_history_id = h.id
    from (
      select distinct on (c.video_id) c.video_id, c.suspected_at, h.id
      from jsonb_to_recordset(${links}::text::jsonb) as c(video_id text, suspected_at timestamptz)
      join video_status_history h on h.video_id = c.video_id
      order by c.video_id, h.id desc
    ) h
    where e.video_id = h.video_id and e.status_history_id is null
      and (e.decided = 'status_change' or (e.decided = 'suspected' and e.recorded_at >= h.suspected_at))`;
}

/** Definite answers that changed and confirmed nothing (a live video still live): counted, their bodies not kept. */
export async function countUnkeptObservations(tx: Queryable, videoIds: string[]): Promise<void> {
  if (videoIds.length === 0) return;
  await tx`update video_checks set unkept_observations = unkept_observations + 1 where video_id = any(${videoIds})`;
}

/** A Wayback capture of a video as an observation: its answer, capture timestamp and CDX digest, and what it decided. */
export const captureObservation = (
  capture: WaybackCapture & { videoId: string },
  decided: Decided,
  links: Pick<DecidingObservation, 'videoVersionId' | 'subtitleTrackId'> = {},
): DecidingObservation => ({ ...capture, source: 'wayback', decided, ...links });

/**
 * Keeps the answers behind what a batch of a source's records decided, in the transaction that stored
 * them (upsertVideos, whose result it is given): a status it decided, a metadata version its values made,
 * and, for the Wayback, the metadata a capture filled in (a video it stored or changed), each capture
 * with its timestamp and CDX digest. The local archive's answer is the info.json (a video it shows live
 * that decided nothing is counted, not kept, as a probe's routine "still live" answer is); the Wayback's
 * the capture the record was read from.
 */
export async function keepSourceAnswers(
  tx: Queryable,
  source: SourceName,
  records: readonly VideoRecord[],
  stored: { statusDecided: readonly string[]; changed: ReadonlyArray<{ videoId: string }> },
): Promise<void> {
  if (source === 'youtube_api' || records.length === 0) return;
  const versions = await newVersions(
    tx,
    records.map((record) => record.videoId),
  );
  const decidedStatus = new Set(stored.statusDecided);
  const filled = new Set(source === 'wayback' ? stored.changed.map((video) => video.videoId) : []);
  const kept: DecidingObservation[] = [];
  const unkept: string[] = [];
  for (const record of records) {
    const version = versions.get(record.videoId);
    const links = version ? { videoVersionId: version } : {};
    const decided: Decided | undefined = decidedStatus.has(record.videoId)
      ? 'status_change'
      : version
        ? 'metadata_version'
        : filled.has(record.videoId)
          ? 'metadata_filled'
          : undefined;
    if (!decided) {
      if (source === 'archive' && record.availability === 'live') unkept.push(record.videoId);
      continue;
    }
    const observation =
      source === 'archive'
        ? await archiveObservation(record, decided, links)
        : record.capture && captureObservation({ videoId: record.videoId, ...record.capture }, decided, links);
    if (observation) kept.push(observation);
  }
  await keepObservations(
    tx,
    kept,
    kept.filter((o) => o.decided === 'status_change').map((o) => ({ videoId: o.videoId, suspectedAt: null })),
  );
  await countUnkeptObservations(tx, unkept);
}

/** The metadata versions this transaction made (their replaced_at is its now()) that no kept answer names yet, the newest per video. */
async function newVersions(tx: Queryable, videoIds: string[]): Promise<Map<string, string>> {
  const rows = await tx<Array<{ videoId: string; id: string }>>`
    select distinct on (video_id) video_id as "videoId", id::text from video_versions v
    where video_id = any(${videoIds}) and replaced_at = now()
      and not exists (select from evidence_observations e where e.video_version_id = v.id)
    order by video_id, id desc`;
  return new Map(rows.map((row) => [row.videoId, row.id]));
}

/** The archive file (info.json) a record was read from, as it is now; undefined when it has none or the file is gone since. */
async function archiveObservation(
  record: VideoRecord,
  decided: Decided,
  links: Pick<DecidingObservation, 'videoVersionId'>,
): Promise<DecidingObservation | undefined> {
  const path = record.evidenceUrl ? localPath(record.evidenceUrl) : undefined;
  if (!path || record.evidencePath === undefined) return undefined;
  let answer: KeptAnswer;
  try {
    answer = await archiveFileAnswer(path, record.evidencePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const said =
    decided === 'status_change'
      ? `${record.availability === 'live' ? 'available when yt-dlp downloaded it' : 'not available'}`
      : 'the title, description, tags and thumbnail yt-dlp recorded';
  return { videoId: record.videoId, source: 'archive', said: `yt-dlp archive: ${answer.url}: ${said}`, decided, answer, ...links };
}

/**
 * Keeps the answers new subtitle versions were read from (an archive file, the platform's timedtext
 * answer, a Wayback capture with its timestamp and CDX digest), each naming its version (fetchSubtitles' keepAnswers).
 */
export const keepSubtitleAnswers = (
  tx: Queryable,
  kept: Array<{ track: TrackInfo } & Pick<DecidingObservation, 'answer' | 'wayback'>>,
): Promise<void> =>
  keepObservations(
    tx,
    kept.map(({ track, answer, wayback }) => {
      const said = `version ${track.version} of the ${track.kind} ${track.language}${track.trackId ? ` (${track.trackId})` : ''} subtitles: ${answer.url}`;
      const links = { subtitleTrackId: track.id };
      return wayback
        ? captureObservation({ videoId: track.videoId, said, answer, wayback }, 'subtitle_version', links)
        : { videoId: track.videoId, source: track.source, said, decided: 'subtitle_version', answer, ...links };
    }),
    [],
  );
