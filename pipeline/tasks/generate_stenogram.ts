import type { Sql } from '../../core/db/database.ts';
import { runGenerationJob } from '../../core/generations/lifecycle.ts';
import type { Logger } from '../../core/log.ts';
import { stenogramWork } from '../../core/stenograms/stenogramGeneration.ts';
import type { StenogramGenerator } from '../../core/stenograms/stenogram.ts';
import type { StenogramStore } from '../../core/stenograms/store.ts';
import { attemptOf, defineTask } from '../defineTask.ts';

/** Writes one stenogram (job key `stenogram:<id>`) with the configured generator, into the configured store. */
export function generateStenogramTask(deps: { sql: Sql; log: Logger; generator: StenogramGenerator; store: StenogramStore }) {
  const work = stenogramWork(deps.generator, deps.store);
  return defineTask('generate_stenogram', ({ stenogramId }, helpers) => runGenerationJob(deps, work, stenogramId, attemptOf(helpers)));
}
