import type { TaskList } from 'graphile-worker';
import type { CrawlDeps } from '../../core/crawl/crawlStep.ts';
import type { TypesenseTarget } from '../../core/fts/typesense/client.ts';
import type { StatusProbe } from '../../core/status/probes.ts';
import type { StatusSchedule } from '../../core/status/recordObservations.ts';
import type { SubtitleSource } from '../../core/subtitles/sources.ts';
import { createOfflineStenogramGenerator } from '../../core/stenograms/createOfflineStenogramGenerator.ts';
import type { StenogramGenerator } from '../../core/stenograms/stenogram.ts';
import type { StenogramStore } from '../../core/stenograms/store.ts';
import { createExtractiveGenerator } from '../../core/summaries/offline/createExtractiveGenerator.ts';
import type { SummaryGenerator } from '../../core/summaries/summary.ts';
import type { TaskName } from '../../core/jobs/registry.ts';
import type { NamedTask } from '../defineTask.ts';
import { checkStatusTask } from './check_status.ts';
import { cleanupTask } from './cleanup.ts';
import { crawlChannelTask } from './crawl_channel.ts';
import { fetchSubtitlesTask } from './fetch_subtitles.ts';
import { generateStenogramTask } from './generate_stenogram.ts';
import { generateSummaryTask } from './generate_summary.ts';
import { indexVideosTask } from './index_videos.ts';
import { linkReuploadsTask } from './link_reuploads.ts';
import { reconcileStenogramsTask } from './reconcile_stenograms.ts';
import { recrawlChannelsTask } from './recrawl_channels.ts';
import { refreshSearchWordsTask } from './refresh_search_words.ts';
import { scheduleStatusChecksTask } from './schedule_status_checks.ts';

export interface TaskDeps extends CrawlDeps {
  /** Where fetch_subtitles looks (configuredSubtitleSources); none when not given. */
  subtitleSources?: SubtitleSource[];
  /** How check_status probes (configuredStatusProbe); none: videos cannot be verified. */
  statusProbe?: StatusProbe;
  statusSchedule?: StatusSchedule & { checksPerMinute: number; recrawlHours: number };
  /** Where index_videos writes (typesenseTarget); none: queued videos wait for a worker that has it. */
  typesense?: TypesenseTarget;
  /** Who writes summaries (configuredSummaryGenerator); default the built-in offline generator. */
  summaryGenerator?: SummaryGenerator;
  /** Who writes stenograms (configuredStenogramGenerator); default the built-in offline generator. */
  stenogramGenerator?: StenogramGenerator;
  /** Where stenograms' Markdown goes (configuredStenogramStore). */
  stenogramStore: StenogramStore;
}

const DEFAULT_SCHEDULE = { confirmMinutes: 60, recheckDays: 30, checksPerMinute: 5_000, recrawlHours: 24 };

/** Every task of the registry, each under its own name (a missing or misplaced task does not compile). */
export function taskList(deps: TaskDeps): TaskList {
  const schedule = deps.statusSchedule ?? DEFAULT_SCHEDULE;
  const tasks: { [T in TaskName]: NamedTask<T> } = {
    cleanup: cleanupTask(deps.sql),
    crawl_channel: crawlChannelTask(deps),
    fetch_subtitles: fetchSubtitlesTask({
      sql: deps.sql,
      log: deps.log,
      subtitleSources: deps.subtitleSources ?? [],
      videoSources: deps.sources,
    }),
    generate_summary: generateSummaryTask({
      sql: deps.sql,
      log: deps.log,
      generator: deps.summaryGenerator ?? createExtractiveGenerator(),
    }),
    generate_stenogram: generateStenogramTask({
      sql: deps.sql,
      log: deps.log,
      generator: deps.stenogramGenerator ?? createOfflineStenogramGenerator(),
      store: deps.stenogramStore,
    }),
    reconcile_stenograms: reconcileStenogramsTask(deps.sql, deps.stenogramStore, deps.log),
    check_status: checkStatusTask({
      sql: deps.sql,
      log: deps.log,
      statusSchedule: schedule,
      ...(deps.statusProbe ? { statusProbe: deps.statusProbe } : {}),
    }),
    schedule_status_checks: scheduleStatusChecksTask(deps.sql, schedule.checksPerMinute),
    link_reuploads: linkReuploadsTask(deps.sql, deps.log),
    recrawl_channels: recrawlChannelsTask(deps.sql, schedule.recrawlHours),
    refresh_search_words: refreshSearchWordsTask(deps.sql),
    index_videos: indexVideosTask({ sql: deps.sql, log: deps.log, ...(deps.typesense ? { typesense: deps.typesense } : {}) }),
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
  cron('30 * * * *', 'recrawl_channels', '?fill=1d&max=1'),
  cron('*/10 * * * *', 'refresh_search_words', '?fill=1h&max=1'),
  cron('15 * * * *', 'reconcile_stenograms', '?fill=1d&max=1'),
].join('\n');
