import type { Sql } from '../db/database.ts';
import type { JobPayload } from '../jobs/registry.ts';
import type { Logger } from '../log.ts';
import type { VideoSource } from '../sources/types.ts';
import { fetchBatch } from './fetchBatch.ts';
import { failCrawl, finishCrawl } from './finishCrawl.ts';
import { loadCrawl, type Crawl } from './loadCrawl.ts';
import { storeBatch } from './storeBatch.ts';

export interface CrawlDeps { sql: Sql; sources: VideoSource[]; log: Logger }

/** The sources a crawl walks, in order: every configured one for a full crawl, only the archive for a "continue" page. */
const planFor = (kind: Crawl['kind'], sources: VideoSource[]) => (kind === 'full' ? sources : sources.filter((source) => source.name === 'wayback'));

/**
 * One step of a crawl (a crawl_channel job): a batch of one source's videos, stored with their
 * events and the next step's job in one transaction, so a crash repeats the step and nothing
 * else. A step failing on its last attempt ends the crawl with search:error.
 */
export async function crawlStep(deps: CrawlDeps, job: JobPayload<'crawl_channel'>, attempt: { last: boolean }): Promise<void> {
  try {
    await step(deps, job, attempt.last);
  } catch (error) {
    if (attempt.last) await failCrawl(deps.sql, job.crawlId, error);
    throw error;
  }
}

async function step(deps: CrawlDeps, job: JobPayload<'crawl_channel'>, lastAttempt: boolean): Promise<void> {
  const crawl = await loadCrawl(deps.sql, job.crawlId);
  if (!crawl || crawl.status !== 'running') return;
  const plan = planFor(crawl.kind, deps.sources);
  const source = plan[job.step];
  if (!source) {
    await deps.sql.begin((tx) => finishCrawl(tx, crawl));
    return;
  }
  const batch = await fetchBatch(crawl, source, { ...(job.cursor === undefined ? {} : { cursor: job.cursor }), lastAttempt }, deps.log);
  await deps.sql.begin((tx) => storeBatch(tx, crawl, { plan, index: job.step }, batch));
}
