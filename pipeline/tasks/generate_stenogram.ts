import { generateStenogram, type GenerateStenogramDeps } from '../../core/stenograms/generateStenogram.ts';
import { defineTask } from '../defineTask.ts';

/** Writes one stenogram (job key `stenogram:<id>`) with the configured generator, into the configured store. */
export function generateStenogramTask(deps: GenerateStenogramDeps) {
  return defineTask('generate_stenogram', async ({ stenogramId }, helpers) => {
    await generateStenogram(deps, stenogramId, {
      finalAttempt: helpers.job.attempts >= helpers.job.max_attempts,
      ...(helpers.abortSignal ? { signal: helpers.abortSignal } : {}),
    });
  });
}
