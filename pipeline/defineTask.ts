import type { JobHelpers, Task } from 'graphile-worker';
import { jobPayloads, type JobPayload, type TaskName } from '../core/jobs/registry.ts';
import { jobDuration, jobFailures } from '../core/metrics.ts';

/** A graphile-worker task that knows its name, so the task list can be checked against the registry. */
export type NamedTask<T extends TaskName> = Task & { readonly taskName: T };

/** A task whose handler gets its payload parsed by the registry's schema for that task; every run is timed and counted (core/metrics.ts). */
export function defineTask<T extends TaskName>(
  task: T,
  handler: (payload: JobPayload<T>, helpers: JobHelpers) => Promise<void>,
): NamedTask<T> {
  const schema = jobPayloads[task];
  const run: Task = async (payload, helpers) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      await handler(schema.parse(payload ?? {}) as JobPayload<T>, helpers);
      jobDuration.observe({ task, outcome: 'ok' }, seconds());
    } catch (error) {
      jobDuration.observe({ task, outcome: 'error' }, seconds());
      jobFailures.inc({ task });
      throw error;
    }
  };
  return Object.assign(run, { taskName: task });
}

/** Whether this run is the job's last attempt, and its abort signal: what a job that may fail for good needs to know. */
export const attemptOf = (helpers: JobHelpers) => ({
  finalAttempt: helpers.job.attempts >= helpers.job.max_attempts,
  ...(helpers.abortSignal ? { signal: helpers.abortSignal } : {}),
});
