import type { Queryable, Sql } from '../db/database.ts';

export const CHECK_STATUS_TASK = 'check_status';
/** Videos one check_status job probes: one videos.list call. */
export const CHECK_BATCH = 50;
/** Videos queued per transaction when many are: each chunk stays well inside the statement timeout. */
const CHUNK = 20_000;

/** Which videos: those due now, or (due or not) these videos, or the videos of these channels. */
export interface CheckSelection { videoIds?: string[]; channelIds?: string[] }

export interface Scheduled { videos: number; jobs: number; jobIds: string[] }

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
  const [row] = await tx<Array<Scheduled & { lastVideoId: string | null }>>`
    with picked as (
      select k.video_id from video_checks k
      where ${options.videoIds ? tx`k.video_id = any(${options.videoIds})` : options.channelIds ? tx`k.video_id in (select video_id from videos where channel_id = any(${options.channelIds}))` : tx`k.next_check_at <= now()`}
        and k.video_id > ${options.after ?? ''}
      order by ${explicit ? tx`k.video_id` : tx`k.next_check_at`}
      limit ${options.limit}
      for update skip locked
    ), leased as (
      update video_checks k set next_check_at = now() + interval '1 hour' from picked where k.video_id = picked.video_id returning k.video_id
    ), batches as (
      select array_agg(video_id order by video_id) as ids from (
        select video_id, (row_number() over (order by video_id) - 1) / ${CHECK_BATCH} as batch from leased
      ) numbered group by batch
    ), queued as (
      select (graphile_worker.add_job(${CHECK_STATUS_TASK}, json_build_object('videoIds', ids), priority => ${options.priority ?? 8}, max_attempts => 3)).id from batches
    )
    select (select count(*) from leased)::int as videos, (select count(*) from queued)::int as jobs,
      coalesce((select array_agg(id::text) from queued), '{}') as "jobIds", (select max(video_id) from leased) as "lastVideoId"`;
  return row!;
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
