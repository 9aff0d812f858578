import { crawlStep, type CrawlDeps } from '../../core/crawl/crawlStep.ts';
import { defineTask } from '../defineTask.ts';

/** One step of a crawl (core/crawl/crawlStep.ts); its last attempt ends the crawl with search:error if it fails too. */
export const crawlChannelTask = (deps: CrawlDeps) =>
  defineTask('crawl_channel', (payload, helpers) => crawlStep(deps, payload, { last: helpers.job.attempts >= helpers.job.max_attempts }));
