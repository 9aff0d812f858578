import { generateSummary, type GenerateSummaryDeps } from '../../core/summaries/generateSummary.ts';
import { defineTask } from '../defineTask.ts';

/** Writes one summary (job key `summary:<id>`: a repeated request joins it), with the configured generator. */
export function generateSummaryTask(deps: GenerateSummaryDeps) {
  return defineTask('generate_summary', async ({ summaryId }, helpers) => {
    await generateSummary(deps, summaryId, {
      finalAttempt: helpers.job.attempts >= helpers.job.max_attempts,
      ...(helpers.abortSignal ? { signal: helpers.abortSignal } : {}),
    });
  });
}
