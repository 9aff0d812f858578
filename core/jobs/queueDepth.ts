import type { Queryable } from '../db/database.ts';

export interface TaskQueue {
  task: string;
  /** Due and not taken by a worker. */
  waiting: number;
  /** Due later (a retry's backoff, a scheduled run). */
  scheduled: number;
  running: number;
  /** Out of attempts: kept for inspection, never run again. */
  failed: number;
  /** How long the oldest waiting job has been due, in seconds; null when none waits. */
  oldestWaitingSeconds: number | null;
}

/**
 * The queue by task, from graphile-worker's `jobs` view in one statement outside any transaction (as
 * its documentation asks): the jobs table is the queue, so this reads as many rows as jobs are queued.
 */
export async function queueDepth(sql: Queryable): Promise<TaskQueue[]> {
  return sql<TaskQueue[]>`
    select task_identifier as task,
      count(*) filter (where locked_at is null and attempts < max_attempts and run_at <= now())::int as waiting,
      count(*) filter (where locked_at is null and attempts < max_attempts and run_at > now())::int as scheduled,
      count(*) filter (where locked_at is not null)::int as running,
      count(*) filter (where locked_at is null and attempts >= max_attempts)::int as failed,
      extract(epoch from now() - min(run_at) filter (where locked_at is null and attempts < max_attempts and run_at <= now()))::float8
        as "oldestWaitingSeconds"
    from graphile_worker.jobs group by task_identifier order by task_identifier`;
}
