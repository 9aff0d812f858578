import { execFile } from 'node:child_process';
import cron, { type ScheduledTask } from 'node-cron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import type { Database } from '../../core/db/openDatabase.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { ABANDONED_AFTER_SECONDS } from '../../core/workerHeartbeat.ts';
import { recordHeartbeat, unlockAbandonedJobs } from '../../pipeline/heartbeat.ts';
import { startWorker, type WorkerHandle } from '../../pipeline/worker.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addJob, jobRow, lockJob } from '../support/jobs.ts';

// startWorker as `afterimage worker` runs it, in this process, over this file's database.

let db: TestDatabase;
let handle: WorkerHandle | undefined;
let beatTask: ScheduledTask | undefined;
const logs: Array<{ level: string; msg: string; workerIds?: string[] }> = [];
const jobs: { abandoned?: string; killed?: string } = {};
let freedAtStart: Array<string | undefined> = [];
let idsAtStart: string[] = [];
let lockedByRunningJob: string | undefined;

const heartbeatRow = async () => {
  const [row] = await db.sql<{ pid: number; workerIds: string[] }[]>`
    select pid, worker_ids as "workerIds" from worker_heartbeats where process_id = ${handle!.id}`;
  return row;
};

beforeAll(async () => {
  db = await createTestDatabase();
  const database: Database = { sql: db.sql, url: db.url, embedded: false, close: async () => undefined };
  const config = loadConfig({ DATABASE_URL: db.url, WORKER_CONCURRENCY: '2' });
  const log = createLogger('warn', {}, (line) => logs.push(JSON.parse(line)));

  // Left behind by a worker that died long ago: no heartbeat names worker-dead, and the lock is old.
  jobs.abandoned = await addJob(db.sql, 'cleanup');
  await lockJob(db.sql, jobs.abandoned, 'worker-dead', ABANDONED_AFTER_SECONDS * 5);
  // Left behind seconds ago by a worker process of this machine that was killed: fresh heartbeat, dead pid.
  const child = execFile(process.execPath, ['-e', '']);
  await new Promise((done) => child.on('exit', done));
  jobs.killed = await addJob(db.sql, 'cleanup');
  await lockJob(db.sql, jobs.killed, 'worker-killed', 2);
  await recordHeartbeat(db.sql, 'proc-killed', ['worker-killed']);
  await db.sql`update worker_heartbeats set pid = ${child.pid!} where process_id = 'proc-killed'`;

  const before = new Set(cron.getTasks().keys());
  handle = await startWorker(config, database, log, await buildServices(config, { sql: db.sql, log }, { sources: [] }));
  freedAtStart = [
    (await jobRow(db.sql, jobs.abandoned))?.lockedBy ?? undefined,
    (await jobRow(db.sql, jobs.killed))?.lockedBy ?? undefined,
  ];
  beatTask = [...cron.getTasks().entries()].find(([id]) => !before.has(id))?.[1];
  idsAtStart = (await heartbeatRow())?.workerIds ?? [];
});

afterAll(async () => {
  await handle?.stop().catch(() => undefined);
  await db?.drop();
});

describe('startWorker', () => {
  it('frees the jobs of dead workers before it takes work, then runs them', async () => {
    // Right after start, neither job is held by its dead worker any more (free, or already retaken).
    expect(freedAtStart[0]).not.toBe('worker-dead');
    expect(freedAtStart[1]).not.toBe('worker-killed');
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', workerIds: ['worker-killed'] }));
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', workerIds: ['worker-dead'] }));
    // A job that succeeded is deleted.
    await eventually(
      async () => (await jobRow(db.sql, jobs.abandoned!)) === undefined && (await jobRow(db.sql, jobs.killed!)) === undefined,
      'both jobs to complete',
    );
    expect(await db.sql`select 1 from worker_heartbeats where process_id = 'proc-killed'`).toHaveLength(0);
  });

  it('records its heartbeat at start and schedules a beat every 10 s', async () => {
    const row = await heartbeatRow();
    expect(row?.pid).toBe(process.pid);
    expect(beatTask).toBeDefined();
    expect(['idle', 'running']).toContain(beatTask!.getStatus());
    const next = beatTask!.getNextRuns(3).map((date) => date.getTime());
    expect(next[1]! - next[0]!).toBe(10_000);
    expect(next[2]! - next[1]!).toBe(10_000);
  });

  it('names its graphile-worker ids in the heartbeat, so a job it is running is never taken from it', async () => {
    // Hold the table the cleanup task deletes from, so the worker stays inside the job.
    const blocker = await db.sql.reserve();
    let job: string | undefined;
    try {
      await blocker`begin`;
      await blocker`lock table usage_counters in access exclusive mode`;
      job = await addJob(db.sql, 'cleanup');
      const lockedBy = await eventually(async () => (await jobRow(db.sql, job!))?.lockedBy, 'the worker to take the job');
      lockedByRunningJob = lockedBy;

      // The job has been running for ten minutes: longer than any heartbeat threshold.
      await db.sql`update graphile_worker._private_jobs set locked_at = now() - interval '10 minutes' where id = ${job}`;
      const [{ since }] = await db.sql<[{ since: Date }]>`select now() as since`;
      await beatTask!.execute(); // the scheduled beat, run now rather than waited for
      const row = await eventually(async () => {
        const [current] = await db.sql<{ workerIds: string[] }[]>`
          select worker_ids as "workerIds" from worker_heartbeats where process_id = ${handle!.id} and last_seen_at >= ${since}`;
        return current;
      }, 'the next beat');

      // The beat (and any other process's) must not free a job its own worker is still running...
      expect(await unlockAbandonedJobs(db.sql)).toEqual([]);
      expect((await jobRow(db.sql, job))!.lockedBy).toBe(lockedBy);
      // ...which it can only know if the heartbeat names the id graphile-worker locks jobs with.
      expect(row.workerIds).toContain(lockedBy);
    } finally {
      await blocker`rollback`.catch(() => undefined);
      blocker.release();
    }
    await eventually(async () => (await jobRow(db.sql, job!)) === undefined, 'the blocked job to finish');
  });

  it('names that id from the start, not only from its first scheduled beat 10 s later', () => {
    // Otherwise a worker killed in its first seconds leaves jobs that the next start cannot free at once.
    expect(lockedByRunningJob).toBeDefined();
    expect(idsAtStart).toContain(lockedByRunningJob);
  });

  it('a job end that fails with a deadlock is retried: the same pool goes on taking jobs, and stops when asked', async () => {
    // The first delete of a finished job fails as a deadlock with a transaction queueing jobs would make it fail.
    // A sequence: its nextval outlives the failed statement's rollback.
    await db.sql`create sequence deadlock_once`;
    await db.sql.unsafe(`
      create function graphile_worker.deadlock_once() returns trigger language plpgsql as $$
      begin
        if nextval('public.deadlock_once') = 1 then raise exception 'deadlock detected (made by the test)' using errcode = '40P01'; end if;
        return old;
      end $$;
      create trigger deadlock_once before delete on graphile_worker._private_jobs
        for each row execute function graphile_worker.deadlock_once()`);
    const runner = handle!.runner;
    try {
      const first = await addJob(db.sql, 'cleanup');
      await eventually(async () => (await jobRow(db.sql, first)) === undefined, 'the first job ended');
      expect((await db.sql`select last_value::int as n from deadlock_once`)[0]!.n).toBeGreaterThan(1);
      const second = await addJob(db.sql, 'cleanup');
      await eventually(async () => (await jobRow(db.sql, second)) === undefined, 'a job after it ended too');
      // The same pool ran both: the failed end did not stop it (nor did keepRunning have to start another).
      expect(handle!.runner).toBe(runner);
    } finally {
      await db.sql.unsafe(
        `drop trigger deadlock_once on graphile_worker._private_jobs; drop function graphile_worker.deadlock_once(); drop sequence deadlock_once`,
      );
    }
  });

  it('stop() stops the runner and the beat, and removes the heartbeat', async () => {
    const stopping = handle!;
    handle = undefined;
    await stopping.stop();
    await stopping.runner.promise; // settles once the runner has stopped
    expect(await db.sql`select 1 from worker_heartbeats where process_id = ${stopping.id}`).toHaveLength(0);
    expect(beatTask!.getStatus()).toBe('stopped');
    // No worker takes jobs any more.
    const job = await addJob(db.sql, 'cleanup');
    expect(
      await db.sql`select 1 from pg_stat_activity where datname = current_database() and query ilike '%graphile_worker%' and pid <> pg_backend_pid() and state <> 'idle'`,
    ).toHaveLength(0);
    expect((await jobRow(db.sql, job))!.lockedBy).toBeNull();
  });
});
