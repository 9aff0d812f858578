import type { Queryable } from '../db/database.ts';

export const CHECK_STATUS_TASK = 'check_status';
/** Videos one check_status job probes: one videos.list call. */
export const CHECK_BATCH = 50;

/**
 * Queues check_status jobs for up to `limit` videos that are due (or, due or not, for these videos or
 * the videos of these channels),
 * 50 a job, in one transaction. Each picked video's next check moves an hour ahead at once, a lease
 * that keeps the next run from picking it again while its job waits; the job sets the real one.
 * Rows another scheduler holds are skipped, so concurrent runs never queue a video twice.
 */
export async function scheduleStatusChecks(tx: Queryable, options: { limit: number; videoIds?: string[]; channelIds?: string[]; priority?: number }): Promise<{ videos: number; jobs: number; jobIds: string[] }> {
  const [row] = await tx<{ videos: number; jobs: number; jobIds: string[] }[]>`
    with picked as (
      select video_id from videos
      where ${options.videoIds ? tx`video_id = any(${options.videoIds})` : options.channelIds ? tx`channel_id = any(${options.channelIds})` : tx`next_check_at <= now()`}
      order by next_check_at
      limit ${options.limit}
      for update skip locked
    ), leased as (
      update videos v set next_check_at = now() + interval '1 hour' from picked where v.video_id = picked.video_id returning v.video_id
    ), batches as (
      select array_agg(video_id order by video_id) as ids from (
        select video_id, (row_number() over (order by video_id) - 1) / ${CHECK_BATCH} as batch from leased
      ) numbered group by batch
    ), queued as (
      select (graphile_worker.add_job(${CHECK_STATUS_TASK}, json_build_object('videoIds', ids), priority => ${options.priority ?? 8}, max_attempts => 3)).id from batches
    )
    select (select count(*) from leased)::int as videos, (select count(*) from queued)::int as jobs,
      coalesce((select array_agg(id::text) from queued), '{}') as "jobIds"`;
  return row!;
}
