import { EventEmitter } from 'node:events';
import { run, type Runner, type WorkerEvents } from 'graphile-worker';
import cron from 'node-cron';
import type { Config } from '../core/config.ts';
import type { Database } from '../core/db/openDatabase.ts';
import { typesenseTarget } from '../core/fts/typesense/client.ts';
import { setSearchSync } from '../core/fts/typesense/sync.ts';
import { graphileLogger } from '../core/graphileLogger.ts';
import type { Logger } from '../core/log.ts';
import type { VideoSource } from '../core/sources/types.ts';
import { configuredStatusProbe } from '../core/status/probes.ts';
import { configuredSubtitleSources } from '../core/subtitles/sources.ts';
import { createLlmStenogramGenerator } from '../core/stenograms/createLlmStenogramGenerator.ts';
import { createOfflineStenogramGenerator } from '../core/stenograms/createOfflineStenogramGenerator.ts';
import { configuredStenogramStore } from '../core/stenograms/store.ts';
import { configuredLlmClient } from '../core/llm/configuredClient.ts';
import { createLlmSummaryGenerator } from '../core/summaries/llmSummariser.ts';
import { createExtractiveGenerator } from '../core/summaries/offline/createExtractiveGenerator.ts';
import { processId, reapDeadLocalWorkers, recordHeartbeat, removeHeartbeat, unlockAbandonedJobs } from './heartbeat.ts';
import { crontab, taskList } from './tasks/index.ts';

export interface WorkerHandle { id: string; runner: Runner; stop(): Promise<void> }

/**
 * Runs graphile-worker with our tasks and crontab, beats a heartbeat every 10 s (naming its
 * graphile-worker ids), and frees jobs that dead workers left locked: once at start, then on every beat.
 */
export async function startWorker(config: Config, db: Database, log: Logger, sources: VideoSource[] = []): Promise<WorkerHandle> {
  const id = processId();
  const workerIds = new Set<string>();
  // Listening before run() starts, so no worker is created unseen.
  const events: WorkerEvents = new EventEmitter();
  // graphile-worker 0.17 locks jobs with the pool's id, not the individual workers'.
  events.on('pool:create', ({ workerPool }) => workerIds.add(workerPool.id));
  events.on('pool:release', ({ workerPool }) => workerIds.delete(workerPool.id));
  const beat = async () => {
    await recordHeartbeat(db.sql, id, [...workerIds]);
    const freed = await unlockAbandonedJobs(db.sql);
    if (freed.length) log.warn('freed jobs locked by workers that stopped beating', { workerIds: freed });
  };
  const statusProbe = configuredStatusProbe(config);
  if (!statusProbe) log.info('no status probe configured (YOUTUBE_API_KEY or STATUS_WATCH_PROBE): video statuses stay as the sources describe them');
  // One LLM client for summaries and stenograms alike, so LLM_CONCURRENCY holds for the process.
  const llm = configuredLlmClient(config, log);
  const summaryGenerator = llm ? createLlmSummaryGenerator(llm) : createExtractiveGenerator();
  const offlineStenograms = createOfflineStenogramGenerator();
  const stenogramGenerator = llm ? createLlmStenogramGenerator(llm, offlineStenograms) : offlineStenograms;
  const stenogramStore = configuredStenogramStore(config);
  log.info(llm ? `summaries and stenograms are written by ${llm.model} (LLM_BASE_URL)` : `summaries and stenograms are written offline (${summaryGenerator.model}, ${stenogramGenerator.model}); set LLM_BASE_URL for an LLM`, { stenogramStore: stenogramStore.location });
  const typesense = typesenseTarget(config, log, { purpose: 'indexing' });
  if (await setSearchSync(db.sql, Boolean(typesense))) {
    log.info(typesense ? 'search sync on: changed videos are indexed in Typesense; run `afterimage reindex` once to index the videos stored before' : 'search sync off: no TYPESENSE_URL, changed videos are no longer queued for Typesense');
  }
  const reaped = await reapDeadLocalWorkers(db.sql);
  if (reaped.length) log.warn('freed jobs locked by killed worker processes of this machine', { workerIds: reaped });
  await beat();

  const runner = await run({
    connectionString: db.url,
    concurrency: config.WORKER_CONCURRENCY,
    maxPoolSize: config.WORKER_CONCURRENCY + 2,
    taskList: taskList({
      sql: db.sql,
      sources,
      log,
      sourceWaitBudgetMs: config.SOURCE_WAIT_BUDGET_MS,
      subtitleSources: configuredSubtitleSources(config),
      summaryGenerator,
      stenogramGenerator,
      stenogramStore,
      ...(statusProbe ? { statusProbe } : {}),
      ...(typesense ? { typesense } : {}),
      statusSchedule: {
        confirmMinutes: config.STATUS_CONFIRM_MINUTES,
        recheckDays: config.STATUS_RECHECK_DAYS,
        checksPerMinute: config.STATUS_CHECKS_PER_MINUTE,
        recrawlHours: config.RECRAWL_HOURS,
      },
    }),
    crontab,
    noHandleSignals: true,
    logger: graphileLogger(log),
    events,
  });
  await beat(); // names the pool before anything could kill this process unseen

  const heartbeat = cron.schedule('*/10 * * * * *', () => {
    beat().catch((error) => log.warn('heartbeat failed', { err: error }));
  });
  log.info('worker started', { processId: id, concurrency: config.WORKER_CONCURRENCY });

  return {
    id,
    runner,
    async stop() {
      await heartbeat.stop();
      await runner.stop();
      await removeHeartbeat(db.sql, id).catch(() => undefined);
      log.info('worker stopped', { processId: id });
    },
  };
}
