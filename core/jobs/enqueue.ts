import type { Queryable } from '../db/database.ts';
import { jobPayloads, type JobPayload, type TaskName } from './registry.ts';

export interface JobOptions {
  /** graphile-worker priority: lower runs first (default 0). */
  priority?: number;
  /** Default 25. */
  maxAttempts?: number;
  /** A named queue runs its jobs one at a time (default none: in parallel). */
  queueName?: string;
  /** How a job with the same key is joined (graphile-worker's job_key_mode; default replace). */
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  /** When the job may run (default now). */
  runAt?: Date;
}

/**
 * Queues one job inside the caller's transaction, its payload checked against the task's schema
 * (a bad payload throws here, not later in the worker). Answers the job id.
 */
export async function enqueue<T extends TaskName>(
  tx: Queryable,
  task: T,
  payload: JobPayload<T>,
  options: JobOptions & { jobKey?: string } = {},
): Promise<string> {
  const { jobKey, ...rest } = options;
  const [id] = await enqueueMany(tx, task, [payload], { ...rest, ...(jobKey === undefined ? {} : { jobKey: () => jobKey }) });
  return id!;
}

/** Queues a job per payload in one statement (set-based), each checked first; answers the job ids in payload order. */
export async function enqueueMany<T extends TaskName>(
  tx: Queryable,
  task: T,
  payloads: ReadonlyArray<JobPayload<T>>,
  options: JobOptions & { jobKey?: (payload: JobPayload<T>) => string } = {},
): Promise<string[]> {
  if (payloads.length === 0) return [];
  const schema = jobPayloads[task];
  const specs = payloads.map((payload) => ({ payload: schema.parse(payload), jobKey: options.jobKey?.(payload) ?? null }));
  const jobs = await tx<{ id: string }[]>`
    select (graphile_worker.add_job(${task}, (spec->'payload')::json,
      queue_name => ${options.queueName ?? null}::text,
      max_attempts => ${options.maxAttempts ?? null}::int,
      job_key => spec->>'jobKey',
      priority => ${options.priority ?? null}::int,
      run_at => ${options.runAt ?? null}::timestamptz,
      job_key_mode => ${options.jobKeyMode ?? 'replace'})).id::text as id
    from jsonb_array_elements(${JSON.stringify(specs)}::text::jsonb) with ordinality as specs(spec, position)
    order by position`;
  return jobs.map((job) => job.id);
}
