import type { Queryable, Sql } from '../db/database.ts';
import { enqueueMany } from '../jobs/enqueue.ts';
import { CHECK_BATCH } from '../jobs/registry.ts';
/** Videos queued per transaction when many are: each chunk stays well inside the statement timeout. */
const CHUNK = 20_000;

/** Which videos: those due now, or (due or not) these videos, or the videos of these channels. */
export interface CheckSelection {
  videoIds?: string[];
  channelIds?: string[];
}

export interface Scheduled {
  videos: number;
  jobs: number;
  jobIds: string[];
}

/**
 * Queues check_status jobs for up to `limit` selected videos, 50 a job, in one transaction: the
 * due ones oldest first, explicit selections by id after `after` (so a caller can walk them in
 * chunks). Each picked video's next check moves an hour ahead at once, a lease that keeps the next
 * run from picking it again while its job waits; the job sets the real one. Rows another scheduler
 * holds are skipped, so concurrent runs never queue a video twice.
 */
export async function scheduleStatusChecks(
  tx: Queryable,
  options: CheckSelection & { limit: number; after?: string; priority?: number },
): Promise<Scheduled & { lastVideoId: string | null }> {
  const explicit = options.videoIds !== undefined || options.channelIds !== undefined;
  const leased = await tx<{ videoId: string }[]>`
    with picked as (
      select k.video_id from video_checks k
      where ${options.videoIds ? tx`k.video_id = any(${options.videoIds})` : options.channelIds ? tx`k.video_id in (select video_id from videos where channel_id = any(${options.channelIds}))` : tx`k.next_check_at <= now()`}
        and k.video_id > ${options.after ?? ''}
      order by ${explicit ? tx`k.video_id` : tx`k.next_check_at`}
      limit ${options.limit}
      for update skip locked
    ), leased as (
      update video_checks k set next_check_at = now() + interval '1 hour' from picked where k.video_id = picked.video_id returning k.video_id
    )
    select video_id as "videoId" from leased order by video_id`;
  const ids = leased.map((row) => row.videoId);
  const batches = Array.from({ length: Math.ceil(ids.length / CHECK_BATCH) }, (_, index) => ({
    videoIds: ids.slice(index * CHECK_BATCH, (index + 1) * CHECK_BATCH),
  }));
  const jobIds = await enqueueMany(tx, 'check_status', batches, { priority: options.priority ?? 8, maxAttempts: 3 });
  return { videos: ids.length, jobs: jobIds.length, jobIds, lastVideoId: ids.at(-1) ?? null };
}

/** Queues checks of every selected video, a transaction per chunk, telling `onChunk` the running totals. */
export async function scheduleAllStatusChecks(
  sql: Sql,
  selection: CheckSelection & { priority?: number; chunk?: number },
  onChunk: (scheduled: Scheduled) => void = () => {},
): Promise<Scheduled> {
  const total: Scheduled = { videos: 0, jobs: 0, jobIds: [] };
  let after: string | undefined;
  for (;;) {
    const size = selection.chunk ?? CHUNK;
    const chunk = await sql.begin((tx) => scheduleStatusChecks(tx, { ...selection, limit: size, ...(after ? { after } : {}) }));
    total.videos += chunk.videos;
    total.jobs += chunk.jobs;
    total.jobIds.push(...chunk.jobIds);
    onChunk(total);
    if (chunk.videos < size || !chunk.lastVideoId) return total;
    // Due videos leave the due set as they are leased; explicit selections are walked by id.
    if (selection.videoIds || selection.channelIds) after = chunk.lastVideoId;
  }
}
