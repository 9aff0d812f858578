import type { JobHelpers, Task } from 'graphile-worker';
import { jobPayloads, type JobPayload, type TaskName } from '../core/jobs/registry.ts';

/** A graphile-worker task that knows its name, so the task list can be checked against the registry. */
export type NamedTask<T extends TaskName> = Task & { readonly taskName: T };

/** A task whose handler gets its payload parsed by the registry's schema for that task. */
export function defineTask<T extends TaskName>(
  task: T,
  handler: (payload: JobPayload<T>, helpers: JobHelpers) => Promise<void>,
): NamedTask<T> {
  const schema = jobPayloads[task];
  const run: Task = async (payload, helpers) => handler(schema.parse(payload ?? {}) as JobPayload<T>, helpers);
  return Object.assign(run, { taskName: task });
}

/** Whether this run is the job's last attempt, and its abort signal: what a job that may fail for good needs to know. */
export const attemptOf = (helpers: JobHelpers) => ({
  finalAttempt: helpers.job.attempts >= helpers.job.max_attempts,
  ...(helpers.abortSignal ? { signal: helpers.abortSignal } : {}),
});
