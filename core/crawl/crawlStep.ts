import type { Sql } from '../db/database.ts';
import type { JobPayload } from '../jobs/registry.ts';
import type { Logger } from '../log.ts';
import type { VideoSource } from '../sources/types.ts';
import { fetchBatch } from './fetchBatch.ts';
import { failCrawl, finishCrawl } from './finishCrawl.ts';
import { isQueued, loadCrawl, type Crawl } from './loadCrawl.ts';
import { retryProgress } from './retryProgress.ts';
import { storeBatch } from './storeBatch.ts';
import { videosCrawled } from '../metrics.ts';

export interface CrawlDeps {
  sql: Sql;
  sources: VideoSource[];
  log: Logger;
  /** SOURCE_WAIT_BUDGET_MS: how long a step waits on a source that answers nothing. */
  sourceWaitBudgetMs: number;
}

/** The sources a crawl walks, in order: every configured one for a full crawl, only the archive for a "continue" page. */
const planFor = (kind: Crawl['kind'], sources: VideoSource[]) =>
  kind === 'full' ? sources : sources.filter((source) => source.name === 'wayback');

/**
 * One step of a crawl (a crawl_channel job): a batch of one source's videos, stored with their
 * events and the next step's job in one transaction, so a crash repeats the step and nothing
 * else. A source's failures do not fail the step (see fetchBatch); a step failing on its last
 * attempt (the database, say) ends the crawl with search:error.
 */
export async function crawlStep(deps: CrawlDeps, job: JobPayload<'crawl_channel'>, attempt: { last: boolean }): Promise<void> {
  try {
    await step(deps, job);
  } catch (error) {
    if (attempt.last) await failCrawl(deps.sql, job.crawlId, error);
    throw error;
  }
}

async function step(deps: CrawlDeps, job: JobPayload<'crawl_channel'>): Promise<void> {
  const crawl = await loadCrawl(deps.sql, job.crawlId);
  if (!crawl || crawl.status !== 'running' || !isQueued(crawl, job)) return;
  const plan = planFor(crawl.kind, deps.sources);
  const source = plan[job.step];
  if (!source) {
    await deps.sql.begin((tx) => finishCrawl(tx, crawl));
    return;
  }
  const onRetry = retryProgress(deps.sql, deps.log, crawl.id, source.name);
  const wait = { budgetMs: deps.sourceWaitBudgetMs, onRetry };
  const batch = await fetchBatch(crawl, source, job.cursor === undefined ? {} : { cursor: job.cursor }, wait, deps.log);
  // The retry events go before the batch's, in the stream's order too.
  await onRetry.flushed();
  await deps.sql.begin((tx) => storeBatch(tx, crawl, { plan, index: job.step, cursor: job.cursor }, batch, deps.log));
  videosCrawled.inc({ source: source.name }, batch.videos.length);
}
