import type { TaskList } from 'graphile-worker';
import { cleanupTask } from './cleanup.ts';
import { crawlChannelTask, type CrawlDeps } from './crawl_channel.ts';

export function taskList(deps: CrawlDeps): TaskList {
  return { cleanup: cleanupTask(deps.sql), crawl_channel: crawlChannelTask(deps) };
}

/**
 * graphile-worker's crontab (UTC): each line runs exactly once across all workers, and `fill`
 * backfills runs missed while no worker was up.
 */
export const crontab = ['0 * * * * cleanup ?fill=1d&max=1'].join('\n');
