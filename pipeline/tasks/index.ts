import type { TaskList } from 'graphile-worker';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import type { TaskName } from '../../core/jobs/registry.ts';
import type { Logger } from '../../core/log.ts';
import type { Services } from '../../core/services/buildServices.ts';
import type { NamedTask } from '../defineTask.ts';
import { checkStatusTask } from './check_status.ts';
import { cleanupTask } from './cleanup.ts';
import { deliverWebhooksTask } from './deliver_webhooks.ts';
import { crawlChannelTask } from './crawl_channel.ts';
import { fanOutChangesTask } from './fan_out_changes.ts';
import { fetchSubtitlesTask } from './fetch_subtitles.ts';
import { fetchThumbnailTask } from './fetch_thumbnail.ts';
import { generateStenogramTask } from './generate_stenogram.ts';
import { generateSummaryTask } from './generate_summary.ts';
import { indexVideosTask } from './index_videos.ts';
import { linkReuploadsTask } from './link_reuploads.ts';
import { reconcileStenogramsTask } from './reconcile_stenograms.ts';
import { recrawlChannelsTask } from './recrawl_channels.ts';
import { refreshSearchWordsTask } from './refresh_search_words.ts';
import { runSavedQueriesTask } from './run_saved_queries.ts';
import { scheduleStatusChecksTask } from './schedule_status_checks.ts';

/** What the tasks are built from: the process's services (buildServices) and the settings they read. */
export type TaskDeps = Services & { sql: Sql; log: Logger; config: Config };

/** Every task of the registry, each under its own name (a missing or misplaced task does not compile). */
export function taskList(deps: TaskDeps): TaskList {
  const { sql, log, config } = deps;
  const tasks: { [T in TaskName]: NamedTask<T> } = {
    cleanup: cleanupTask(sql, config.EVIDENCE_RETENTION_DAYS),
    crawl_channel: crawlChannelTask({ sql, log, sources: deps.sources, sourceWaitBudgetMs: config.SOURCE_WAIT_BUDGET_MS }),
    fetch_subtitles: fetchSubtitlesTask({ sql, log, subtitleSources: deps.subtitleSources, videoSources: deps.sources }),
    fetch_thumbnail: fetchThumbnailTask(sql, log, deps.waybackThumbnails),
    generate_summary: generateSummaryTask({ sql, log, generator: deps.summaryGenerator }),
    generate_stenogram: generateStenogramTask({ sql, log, generator: deps.stenogramGenerator, store: deps.stenogramStore }),
    reconcile_stenograms: reconcileStenogramsTask(sql, deps.stenogramStore, log),
    check_status: checkStatusTask({
      sql,
      log,
      statusProbe: deps.statusProbe,
      statusSchedule: { confirmMinutes: config.STATUS_CONFIRM_MINUTES, recheckDays: config.STATUS_RECHECK_DAYS },
    }),
    schedule_status_checks: scheduleStatusChecksTask(sql, config.STATUS_CHECKS_PER_MINUTE),
    link_reuploads: linkReuploadsTask(sql, log),
    recrawl_channels: recrawlChannelsTask(sql, { everyHours: config.RECRAWL_HOURS, watchedEveryHours: config.WATCH_RECRAWL_HOURS }),
    refresh_search_words: refreshSearchWordsTask(sql),
    run_saved_queries: runSavedQueriesTask({ sql, log, search: deps.search, timeoutMs: config.FTS_TIMEOUT_MS }),
    index_videos: indexVideosTask({ sql, log, typesense: deps.typesense }),
    fan_out_changes: fanOutChangesTask(sql, log),
    deliver_webhooks: deliverWebhooksTask({ sql, serverKey: deps.serverKey, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE }),
  };
  return tasks;
}

const cron = (pattern: string, task: TaskName, options: string) => `${pattern} ${task} ${options}`;

/**
 * graphile-worker's crontab (UTC): each line runs exactly once across all workers, and `fill`
 * backfills runs missed while no worker was up (max=1: one catch-up run does the missed work).
 */
export const crontab = [
  cron('0 * * * *', 'cleanup', '?fill=1d&max=1'),
  cron('* * * * *', 'schedule_status_checks', '?fill=1h&max=1'),
  cron('*/10 * * * *', 'recrawl_channels', '?fill=1h&max=1'),
  cron('*/10 * * * *', 'refresh_search_words', '?fill=1h&max=1'),
  cron('15 * * * *', 'reconcile_stenograms', '?fill=1d&max=1'),
].join('\n');
