/** The kept observations of a video as they are shown (the video page), exported (bundles) and served (their raw answer). */
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import type { Queryable } from '../db/database.ts';
import { isoTimestamp } from '../db/isoTimestamp.ts';
import { notFound } from '../errors.ts';

/** One kept observation's record: observations/<id>.json in a bundle. */
export const observationRecord = z.object({
  id: z.string(),
  videoId: z.string(),
  source: z.string().describe('youtube_api, watch_page, yt_dlp, wayback, youtube (caption tracks) or archive (the local yt-dlp archive)'),
  requestUrl: z
    .string()
    .describe("the exact request, secrets (an API key) replaced by ***; an archive file's path inside the archive folder"),
  observedAt: z
    .string()
    .describe("ISO 8601, UTC: when the source answered (its Date header when it sent one); an archive file's modification time"),
  recordedAt: z.string(),
  httpStatus: z.number().int().nullable(),
  contentType: z.string().nullable(),
  decided: z.enum(['suspected', 'status_change', 'confirmation', 'thumbnail', 'metadata_version', 'metadata_filled', 'subtitle_version']),
  said: z.string().describe("the answer's reading the status history shows"),
  historyIndex: z.number().int().nullable().describe('the status history entry it led to (0 is the first), null when none'),
  waybackTimestamp: z.string().nullable().describe("a Wayback capture's 14-digit timestamp, when the answer was one"),
  cdxDigest: z.string().nullable().describe("the capture's digest as the CDX index gives it: SHA-1 of the archived body, base32"),
  captureUrl: z.string().nullable().describe('the capture on the public Wayback Machine (web.archive.org/web/<timestamp>/<url>)'),
  bodySha256: z.string().describe('SHA-256 (hex) of the raw body'),
  bodySize: z.number().int(),
});
export type ObservationRecord = z.infer<typeof observationRecord>;

const iso = (column: string) => isoTimestamp(column);
export const OBSERVATION_COLUMNS = `e.id::text as id, e.video_id as "videoId", e.source, e.request_url as "requestUrl",
  ${iso('e.observed_at')} as "observedAt", ${iso('e.recorded_at')} as "recordedAt", e.http_status as "httpStatus",
  e.content_type as "contentType", e.decided, e.said,
  case when e.status_history_id is not null then
    (select count(*)::int from video_status_history h where h.video_id = e.video_id and h.id < e.status_history_id) end as "historyIndex",
  e.wayback_timestamp as "waybackTimestamp", e.cdx_digest as "cdxDigest",
  case when e.wayback_timestamp is not null then
    'https://web.archive.org/web/' || e.wayback_timestamp || '/' || regexp_replace(e.request_url, '^https?://[^/]+/web/[0-9]{14}[a-z_]*/', '') end as "captureUrl",
  e.body_sha256 as "bodySha256", e.body_size as "bodySize"`;

/** A video's kept observations, oldest first, without their bodies. */
export async function keptObservations(sql: Queryable, videoId: string): Promise<ObservationRecord[]> {
  return sql<ObservationRecord[]>`
    select ${sql.unsafe(OBSERVATION_COLUMNS)} from evidence_observations e where e.video_id = ${videoId} order by e.id`;
}

/** How many definite answers about the video changed nothing and were counted, not kept. */
export async function unkeptObservationCount(sql: Queryable, videoId: string): Promise<number> {
  const [row] = await sql<Array<{ count: number }>>`select unkept_observations as count from video_checks where video_id = ${videoId}`;
  return row?.count ?? 0;
}

/** The raw answer of one kept observation of the video, decompressed; another video's id or a dropped one is 404. */
export async function rawAnswer(
  sql: Queryable,
  videoId: string,
  observationId: string,
): Promise<{ contentType: string | null; body: Buffer }> {
  const [row] = /^\d{1,18}$/.test(observationId)
    ? await sql<Array<{ contentType: string | null; body: Buffer }>>`
        select content_type as "contentType", body_gzip as body from evidence_observations
        where id = ${observationId}::bigint and video_id = ${videoId}`
    : [];
  if (!row) throw notFound(`no kept answer ${observationId} of video ${videoId}; the video page lists those kept`);
  return { contentType: row.contentType, body: gunzipSync(row.body) };
}
