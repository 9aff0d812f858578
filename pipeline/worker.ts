import { EventEmitter } from 'node:events';
import { run, type JobHelpers, type Runner, type Task, type TaskList, type WorkerEvents } from 'graphile-worker';
import cron from 'node-cron';
import type { Config } from '../core/config.ts';
import type { Sql } from '../core/db/database.ts';
import type { Database } from '../core/db/openDatabase.ts';
import { waitForDatabase } from '../core/db/waitForDatabase.ts';
import { setSearchSync } from '../core/fts/typesense/sync.ts';
import { graphileLogger, type Logger } from '../core/log.ts';
import type { Services } from '../core/services/buildServices.ts';
import { HEARTBEAT_INTERVAL_SECONDS } from '../core/workerHeartbeat.ts';
import { processId, reapDeadLocalWorkers, recordHeartbeat, removeHeartbeat, unlockAbandonedJobs } from './heartbeat.ts';
import { crontab, taskList } from './tasks/index.ts';

/** `runner` is the graphile-worker runner of the moment: a new one replaces a runner that a database outage ended. */
export interface WorkerHandle {
  id: string;
  readonly runner: Runner;
  stop(): Promise<void>;
}

/**
 * graphile-worker 0.17.3 records a job's end without awaiting it unless ends are batched: with the
 * database gone, that promise's rejection (ECONNREFUSED) was unhandled and killed the process. Batched
 * (0 ms: the ends of one tick), a deadlock is retried (scripts/patches: the retry loop never retried,
 * graphile/worker#636, so one deadlock with the fan-out queueing jobs stopped the pool for good), and
 * any other failure ends the worker pool, which `keepRunning` starts again once the database is back.
 */
const BATCHED_JOB_ENDS = { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } };

/** The task list with every running task's promise kept in `running`, so a new runner waits for the old one's tasks. */
function trackRunning(tasks: TaskList, running: Set<Promise<unknown>>): TaskList {
  return Object.fromEntries(
    Object.entries(tasks as Record<string, Task>).map(([name, task]) => [
      name,
      (payload: unknown, helpers: JobHelpers) => {
        const done = Promise.resolve(task(payload, helpers));
        running.add(done);
        void done.catch(() => undefined).finally(() => running.delete(done));
        return done;
      },
    ]),
  );
}

/**
 * Replaces a runner that ended unasked (its pool could not record a job's end: the database went away)
 * once the database is back. First the old runner's tasks settle and its jobs are freed with
 * graphile_worker.force_unlock_workers (graphile-worker's own function, as the heartbeat uses it), so
 * a job runs again, as a new attempt, only once its previous run has ended: never twice at once.
 */
async function keepRunning(
  ended: Runner,
  start: () => Promise<Runner>,
  sql: Sql,
  log: Logger,
  stopping: () => boolean,
  running: Set<Promise<unknown>>,
  pools: { workerIds: Set<string>; releasedIds: Set<string> },
): Promise<Runner | undefined> {
  await ended.promise.catch(() => undefined);
  if (stopping()) return undefined;
  log.warn('graphile-worker stopped: waiting for the database, then starting it again', { tasksStillRunning: running.size });
  const started = Date.now();
  await Promise.allSettled([...running]);
  for (;;) {
    await waitForDatabase(sql);
    if (stopping()) return undefined;
    try {
      const ids = [...pools.releasedIds];
      if (ids.length) await sql`select graphile_worker.force_unlock_workers(${ids})`;
      for (const id of ids) {
        pools.releasedIds.delete(id);
        pools.workerIds.delete(id);
      }
      const runner = await start();
      log.info('graphile-worker started again', { afterMs: Date.now() - started, freedWorkerIds: ids });
      return runner;
    } catch (error) {
      log.debug('graphile-worker could not start yet', { err: error });
    }
  }
}

/**
 * Runs graphile-worker with our tasks and crontab over the process's services (buildServices), beats
 * a heartbeat every HEARTBEAT_INTERVAL_SECONDS (naming its graphile-worker ids), and frees jobs that
 * dead workers left locked: once at start, then on every beat. A database outage does not end it:
 * graphile-worker's pool reconnects, or is started again (keepRunning).
 */
export async function startWorker(config: Config, db: Database, log: Logger, services: Services): Promise<WorkerHandle> {
  const id = processId();
  const workerIds = new Set<string>();
  // Listening before run() starts, so no worker is created unseen.
  const events: WorkerEvents = new EventEmitter();
  // graphile-worker 0.17 locks jobs with the pool's id, not the individual workers'.
  events.on('pool:create', ({ workerPool }) => workerIds.add(workerPool.id));
  const releasedIds = new Set<string>();
  // A released pool's id stays in the heartbeat until keepRunning frees its jobs: its tasks may still run.
  events.on('pool:release', ({ workerPool }) => releasedIds.add(workerPool.id));
  const beat = async () => {
    await recordHeartbeat(db.sql, id, [...workerIds]);
    const freed = await unlockAbandonedJobs(db.sql);
    if (freed.length) log.warn('freed jobs locked by workers that stopped beating', { workerIds: freed });
  };
  const { llm, summaryGenerator, stenogramGenerator, stenogramStore, typesense } = services;
  if (!services.statusProbe)
    log.info('no status probe configured (YOUTUBE_API_KEY or STATUS_WATCH_PROBE): video statuses stay as the sources describe them');
  log.info(
    llm
      ? `summaries and stenograms are written by ${llm.model} (LLM_BASE_URL)`
      : `summaries and stenograms are written offline (${summaryGenerator.model}, ${stenogramGenerator.model}); set LLM_BASE_URL for an LLM`,
    { stenogramStore: stenogramStore.location },
  );
  if (await setSearchSync(db.sql, Boolean(typesense))) {
    log.info(
      typesense
        ? 'search sync on: changed videos are indexed in Typesense; run `npx afterimage reindex` once to index the videos stored before'
        : 'search sync off: no TYPESENSE_URL, changed videos are no longer queued for Typesense',
    );
  }
  const reaped = await reapDeadLocalWorkers(db.sql);
  if (reaped.length) log.warn('freed jobs locked by killed worker processes of this machine', { workerIds: reaped });
  await beat();

  const running = new Set<Promise<unknown>>();
  const tasks = trackRunning(taskList({ sql: db.sql, log, config, ...services }), running);
  const logger = await graphileLogger(log);
  const start = () =>
    run({
      connectionString: db.url,
      concurrency: config.WORKER_CONCURRENCY,
      maxPoolSize: config.WORKER_CONCURRENCY + 2,
      taskList: tasks,
      crontab,
      noHandleSignals: true,
      logger,
      events,
      preset: BATCHED_JOB_ENDS,
    });
  let runner = await start();
  let stopping = false;
  const supervise = (current: Runner): void => {
    void keepRunning(current, start, db.sql, log, () => stopping, running, { workerIds, releasedIds }).then((next) => {
      if (!next) return;
      if (stopping) void next.stop();
      else supervise((runner = next));
    });
  };
  supervise(runner);
  await beat(); // names the pool before anything could kill this process unseen

  const heartbeat = cron.schedule(`*/${HEARTBEAT_INTERVAL_SECONDS} * * * * *`, () => {
    beat().catch((error) => log.warn('heartbeat failed', { err: error }));
  });
  log.info('worker started', { processId: id, concurrency: config.WORKER_CONCURRENCY });

  return {
    id,
    get runner() {
      return runner;
    },
    async stop() {
      stopping = true;
      await heartbeat.stop();
      await runner.stop().catch(() => undefined);
      await removeHeartbeat(db.sql, id).catch(() => undefined);
      log.info('worker stopped', { processId: id });
    },
  };
}
