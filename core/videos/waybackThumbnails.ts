/**
 * Thumbnails read from the Wayback Machine (the fetch_thumbnail task): queued when a crawl stores
 * videos the Wayback found, for those with a watch capture and no thumbnail kept; the job reads the
 * image archived at that capture's time and keeps its bytes (video_thumbnails, source 'wayback'), and
 * the Wayback's answer as evidence (a 'thumbnail' observation with the capture's timestamp and digest).
 */
import { createHash } from 'node:crypto';
import type { Queryable, Sql } from '../db/database.ts';
import { enqueueMany } from '../jobs/enqueue.ts';
import { cdxDigest } from '../sources/wayback/cdxDigest.ts';
import { captureTimestamp, type WaybackThumbnailFetcher } from '../sources/wayback/thumbnail.ts';
import { withLastAnswer, type KeptAnswer } from '../sources/keptAnswer.ts';
import { imageFacts } from './thumbnailImage.ts';

/** Kept evidence names the public Wayback, not WAYBACK_URL (which may be a proxy nobody outside should learn of). */
const WAYBACK_ORIGIN = 'https://web.archive.org';

/** After crawl steps and the subtitles they ask for: a thumbnail is the least urgent thing a crawl finds. */
const THUMBNAIL_PRIORITY = 20;
const THUMBNAIL_ATTEMPTS = 3;

/** Queues a thumbnail fetch (one job per video: the key joins repeats) for the videos with a capture and no thumbnail, in the caller's transaction. */
export async function enqueueWaybackThumbnails(tx: Queryable, videoIds: readonly string[]): Promise<void> {
  if (videoIds.length === 0) return;
  const missing = await tx<{ videoId: string }[]>`
    select v.video_id as "videoId" from videos v
    where v.video_id = any(${[...new Set(videoIds)]}) and v.archive_url is not null
      and not exists (select from video_thumbnails t where t.video_id = v.video_id)`;
  await enqueueMany(tx, 'fetch_thumbnail', missing, {
    jobKey: ({ videoId }) => `thumbnail:${videoId}`,
    priority: THUMBNAIL_PRIORITY,
    maxAttempts: THUMBNAIL_ATTEMPTS,
  });
}

/** The Wayback capture a kept thumbnail was read from, kept as evidence in the same transaction (core/evidence/keepCapture.ts). */
export interface ThumbnailCapture {
  videoId: string;
  said: string;
  answer: KeptAnswer;
  wayback: { timestamp: string; digest: string };
}
type KeepCapture = (tx: Queryable, capture: ThumbnailCapture) => Promise<void>;

export type WaybackThumbnailOutcome = 'kept' | 'already_kept' | 'no_capture' | 'not_archived' | 'not_an_image';

/**
 * Reads the video's thumbnail as the Wayback archived it at its watch capture's time and keeps it.
 * A failure to reach the Wayback throws (the job is retried); an image it does not hold, or bytes
 * that are no whole image, are an outcome, kept nowhere.
 */
export async function keepWaybackThumbnail(
  sql: Sql,
  fetchThumbnail: WaybackThumbnailFetcher,
  videoId: string,
  keepCapture: KeepCapture,
  signal?: AbortSignal,
): Promise<WaybackThumbnailOutcome> {
  const [video] = await sql<{ archiveUrl: string | null; kept: boolean }[]>`
    select archive_url as "archiveUrl", exists (select from video_thumbnails t where t.video_id = v.video_id) as kept
    from videos v where v.video_id = ${videoId}`;
  if (video?.kept) return 'already_kept';
  const timestamp = video?.archiveUrl ? captureTimestamp(video.archiveUrl) : undefined;
  if (!timestamp) return 'no_capture';
  const { result: found, answer } = await withLastAnswer(WAYBACK_ORIGIN, () => fetchThumbnail(videoId, timestamp, signal));
  if (!found) return 'not_archived';
  const facts = await imageFacts(found.bytes);
  if (!facts) return 'not_an_image';
  await sql.begin(async (tx) => {
    const [kept] = await tx`
      insert into video_thumbnails (video_id, source, bytes, content_hash, width, height, capture_url)
      values (${videoId}, 'wayback', ${found.bytes}, ${createHash('sha256').update(found.bytes).digest('hex')}, ${facts.width}, ${facts.height}, ${found.captureUrl})
      on conflict (video_id, source) do nothing returning 1`;
    if (kept && answer) {
      const said = `the thumbnail as archived near ${timestamp}: a ${facts.width}×${facts.height} image`;
      // The Wayback answers the capture nearest the time asked; its digest is the one the CDX index gives those bytes.
      const wayback = { timestamp, digest: cdxDigest(found.bytes) };
      await keepCapture(tx, { videoId, said, answer, wayback });
    }
  });
  return 'kept';
}
