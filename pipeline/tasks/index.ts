import type { TaskList } from 'graphile-worker';
import type { SubtitleSource } from '../../core/subtitles/sources.ts';
import { cleanupTask } from './cleanup.ts';
import { crawlChannelTask, type CrawlDeps } from './crawl_channel.ts';
import { fetchSubtitlesTask } from './fetch_subtitles.ts';

export interface TaskDeps extends CrawlDeps {
  /** Where fetch_subtitles looks (configuredSubtitleSources); none when not given. */
  subtitleSources?: SubtitleSource[];
}

export function taskList(deps: TaskDeps): TaskList {
  return {
    cleanup: cleanupTask(deps.sql),
    crawl_channel: crawlChannelTask(deps),
    fetch_subtitles: fetchSubtitlesTask({ sql: deps.sql, log: deps.log, subtitleSources: deps.subtitleSources ?? [] }),
  };
}

/**
 * graphile-worker's crontab (UTC): each line runs exactly once across all workers, and `fill`
 * backfills runs missed while no worker was up.
 */
export const crontab = ['0 * * * * cleanup ?fill=1d&max=1'].join('\n');
