import { EventEmitter } from 'node:events';
import { runOnce, type TaskList, type WorkerEvents } from 'graphile-worker';
import { loadConfig } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { graphileLogger, createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { taskList } from '../../pipeline/tasks/index.ts';

export interface JobRow {
  id: string;
  lockedBy: string | null;
  lockedAt: Date | null;
  attempts: number;
  lastError: string | null;
}

/** Queues a graphile-worker job the way the service's own code would, returning its id. */
export async function addJob(sql: Sql, task: string, options: { queueName?: string } = {}): Promise<string> {
  const [job] = await sql<{ id: string }[]>`
    select (graphile_worker.add_job(${task}, '{}'::json, queue_name => ${options.queueName ?? null}::text)).id::text as id`;
  return job!.id;
}

/**
 * Makes a job look held by `workerId` since `ageSeconds` ago, as a worker that was killed mid-job leaves
 * it (and its queue, when it has one).
 */
export async function lockJob(sql: Sql, id: string, workerId: string, ageSeconds: number): Promise<void> {
  await sql`
    update graphile_worker._private_jobs
    set locked_by = ${workerId}, locked_at = now() - make_interval(secs => ${ageSeconds}), attempts = attempts + 1
    where id = ${id}`;
  await sql`
    update graphile_worker._private_job_queues q
    set locked_by = ${workerId}, locked_at = now() - make_interval(secs => ${ageSeconds})
    from graphile_worker._private_jobs j where j.id = ${id} and q.id = j.job_queue_id`;
}

/** The job's row, or undefined once it is gone (graphile-worker deletes a job that succeeded). */
export async function jobRow(sql: Sql, id: string): Promise<JobRow | undefined> {
  const [row] = await sql<JobRow[]>`
    select id::text, locked_by as "lockedBy", locked_at as "lockedAt", attempts, last_error as "lastError"
    from graphile_worker._private_jobs where id = ${id}`;
  return row;
}

export async function queueLock(sql: Sql, queueName: string): Promise<string | null | undefined> {
  const [row] = await sql<
    { lockedBy: string | null }[]
  >`select locked_by as "lockedBy" from graphile_worker._private_job_queues where queue_name = ${queueName}`;
  return row?.lockedBy;
}

/** The service's task list as the worker builds it from a configuration of defaults, with no video sources. */
export async function serviceTaskList(sql: Sql): Promise<TaskList> {
  const config = loadConfig({ DATA_DIR: '.afterimage-test' });
  const log = createLogger('silent');
  return taskList({ sql, log, config, ...(await buildServices(config, { sql, log }, { sources: [] })) });
}

/**
 * graphile-worker's own runner with the service's tasks: runs every job it may take now, and returns
 * once their outcomes are written (runOnce itself may return before the last job's completion is).
 */
export async function runJobsOnce(url: string, sql: Sql): Promise<void> {
  const events: WorkerEvents = new EventEmitter();
  const pools: string[] = [];
  events.on('pool:create', ({ workerPool }) => pools.push(workerPool.id));
  await runOnce({
    connectionString: url,
    taskList: await serviceTaskList(sql),
    logger: await graphileLogger(createLogger('silent')),
    events,
  });
  if (pools.length === 0) throw new Error('runOnce announced no worker pool');
  for (const deadline = Date.now() + 10_000; ; ) {
    const [held] = await sql`select 1 from graphile_worker._private_jobs where locked_by = any(${pools}::text[]) limit 1`;
    if (!held) return;
    if (Date.now() > deadline) throw new Error('the jobs runOnce took were never completed or failed');
    await new Promise((done) => setTimeout(done, 50));
  }
}
