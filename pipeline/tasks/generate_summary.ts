import type { Sql } from '../../core/db/database.ts';
import { runGenerationJob } from '../../core/generations/lifecycle.ts';
import type { Logger } from '../../core/log.ts';
import { summaryWork } from '../../core/summaries/summaryGeneration.ts';
import type { SummaryGenerator } from '../../core/summaries/summary.ts';
import { attemptOf, defineTask } from '../defineTask.ts';

/** Writes one summary (job key `summary:<id>`: a repeated request joins it), with the configured generator. */
export function generateSummaryTask(deps: { sql: Sql; log: Logger; generator: SummaryGenerator }) {
  const work = summaryWork(deps.generator);
  return defineTask('generate_summary', ({ summaryId }, helpers) => runGenerationJob(deps, work, summaryId, attemptOf(helpers)));
}
