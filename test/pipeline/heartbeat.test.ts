import { execFile } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ABANDONED_AFTER_SECONDS } from '../../core/workerHeartbeat.ts';
import { reapDeadLocalWorkers, recordHeartbeat, removeHeartbeat, unlockAbandonedJobs } from '../../pipeline/heartbeat.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addJob, jobRow, lockJob, queueLock, runJobsOnce as runJobs } from '../support/jobs.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const runJobsOnce = () => runJobs(db.url, db.sql);

describe('recordHeartbeat', () => {
  it('inserts a row for the process, then updates the same row', async () => {
    await recordHeartbeat(db.sql, 'proc-a', ['worker-1']);
    const [first] =
      await db.sql`select hostname, pid, worker_ids, started_at, last_seen_at from worker_heartbeats where process_id = 'proc-a'`;
    expect(first).toMatchObject({ pid: process.pid, worker_ids: ['worker-1'] });
    expect(first!.hostname.startsWith(hostname())).toBe(true);

    // An hour-old beat: the next one must move last_seen_at to now, and keep started_at.
    await db.sql`update worker_heartbeats set last_seen_at = now() - interval '1 hour' where process_id = 'proc-a'`;
    await recordHeartbeat(db.sql, 'proc-a', ['worker-1', 'worker-2']);
    const rows = await db.sql`
      select worker_ids, started_at, last_seen_at > now() - interval '1 minute' as fresh from worker_heartbeats where process_id = 'proc-a'`;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual({ worker_ids: ['worker-1', 'worker-2'], started_at: first!.started_at, fresh: true });
  });

  it('removeHeartbeat deletes only that process', async () => {
    await recordHeartbeat(db.sql, 'proc-b', []);
    await removeHeartbeat(db.sql, 'proc-a');
    const left = await db.sql`select process_id from worker_heartbeats order by 1`;
    expect(left).toEqual([{ process_id: 'proc-b' }]);
  });
});

describe('unlockAbandonedJobs', () => {
  beforeEach(async () => {
    await db.sql`delete from worker_heartbeats`;
    await db.sql`delete from graphile_worker._private_jobs`;
  });

  it('frees jobs and queues of worker ids no fresh heartbeat claims, and leaves the others locked', async () => {
    const old = ABANDONED_AFTER_SECONDS + 240;
    const dead = await addJob(db.sql, 'cleanup');
    const deadInQueue = await addJob(db.sql, 'cleanup', { queueName: 'serial' });
    const stale = await addJob(db.sql, 'cleanup');
    const live = await addJob(db.sql, 'cleanup');
    const recent = await addJob(db.sql, 'cleanup');
    await lockJob(db.sql, dead, 'worker-dead', old);
    await lockJob(db.sql, deadInQueue, 'worker-dead-2', old);
    await lockJob(db.sql, stale, 'worker-stale', old);
    await lockJob(db.sql, live, 'worker-live', old);
    await lockJob(db.sql, recent, 'worker-recent', 10);
    // A live process names worker-live; the one naming worker-stale stopped beating five minutes ago.
    await recordHeartbeat(db.sql, 'proc-live', ['worker-other', 'worker-live']);
    await recordHeartbeat(db.sql, 'proc-gone', ['worker-stale']);
    await db.sql`update worker_heartbeats set last_seen_at = now() - make_interval(secs => ${old}) where process_id = 'proc-gone'`;

    // Held by a worker, no job runs: graphile-worker itself would wait four hours.
    await runJobsOnce();
    for (const id of [dead, deadInQueue, stale, live, recent]) expect(await jobRow(db.sql, id)).toBeDefined();

    const freed = await unlockAbandonedJobs(db.sql);
    expect([...freed].sort()).toEqual(['worker-dead', 'worker-dead-2', 'worker-stale']);
    for (const id of [dead, deadInQueue, stale]) expect(await jobRow(db.sql, id)).toMatchObject({ lockedBy: null, lockedAt: null });
    expect(await queueLock(db.sql, 'serial')).toBeNull();
    expect((await jobRow(db.sql, live))!.lockedBy).toBe('worker-live');
    expect((await jobRow(db.sql, recent))!.lockedBy).toBe('worker-recent');

    // A real runner now picks the freed jobs up (a job that succeeded is deleted) and still not the others.
    await runJobsOnce();
    for (const id of [dead, deadInQueue, stale]) expect(await jobRow(db.sql, id)).toBeUndefined();
    expect((await jobRow(db.sql, live))!.lockedBy).toBe('worker-live');
    expect((await jobRow(db.sql, recent))!.lockedBy).toBe('worker-recent');
  });

  it('does nothing (and returns no ids) when nothing is abandoned', async () => {
    const id = await addJob(db.sql, 'cleanup');
    expect(await unlockAbandonedJobs(db.sql)).toEqual([]);
    expect(await jobRow(db.sql, id)).toMatchObject({ lockedBy: null });
  });
});

describe('reapDeadLocalWorkers', () => {
  beforeEach(async () => {
    await db.sql`delete from worker_heartbeats`;
    await db.sql`delete from graphile_worker._private_jobs`;
  });

  /** The pid of a process of this machine that has ended (a short child, waited for). */
  async function deadPid(): Promise<number> {
    const child = execFile(process.execPath, ['-e', '']);
    await new Promise((done) => child.on('exit', done));
    return child.pid!;
  }

  it('frees at once the jobs of a worker process of this machine that is gone, and drops its heartbeat', async () => {
    const gone = await deadPid();
    const inFlight = await addJob(db.sql, 'cleanup');
    // Locked a few seconds ago, and the heartbeat is fresh: only the dead pid tells it is abandoned.
    await lockJob(db.sql, inFlight, 'worker-killed', 5);
    await recordHeartbeat(db.sql, 'proc-killed', ['worker-killed']);
    await db.sql`update worker_heartbeats set pid = ${gone} where process_id = 'proc-killed'`;
    expect(await unlockAbandonedJobs(db.sql)).toEqual([]);

    expect(await reapDeadLocalWorkers(db.sql)).toEqual(['worker-killed']);
    expect(await jobRow(db.sql, inFlight)).toMatchObject({ lockedBy: null, lockedAt: null });
    expect(await db.sql`select 1 from worker_heartbeats where process_id = 'proc-killed'`).toHaveLength(0);
  });

  it('leaves alone live processes, this process, and processes of other machines', async () => {
    const gone = await deadPid();
    const sleeper = execFile('sleep', ['30']);
    try {
      const jobs = {
        self: await addJob(db.sql, 'cleanup'),
        alive: await addJob(db.sql, 'cleanup'),
        remote: await addJob(db.sql, 'cleanup'),
      };
      await lockJob(db.sql, jobs.self, 'worker-self', 5);
      await lockJob(db.sql, jobs.alive, 'worker-alive', 5);
      await lockJob(db.sql, jobs.remote, 'worker-remote', 5);
      await recordHeartbeat(db.sql, 'proc-self', ['worker-self']);
      await recordHeartbeat(db.sql, 'proc-alive', ['worker-alive']);
      await recordHeartbeat(db.sql, 'proc-remote', ['worker-remote']);
      await db.sql`update worker_heartbeats set pid = ${sleeper.pid!} where process_id = 'proc-alive'`;
      // Another machine's pid means nothing here, even one that is not running on this machine.
      await db.sql`update worker_heartbeats set pid = ${gone}, hostname = 'elsewhere/pid:[1]' where process_id = 'proc-remote'`;

      expect(await reapDeadLocalWorkers(db.sql)).toEqual([]);
      expect((await jobRow(db.sql, jobs.self))!.lockedBy).toBe('worker-self');
      expect((await jobRow(db.sql, jobs.alive))!.lockedBy).toBe('worker-alive');
      expect((await jobRow(db.sql, jobs.remote))!.lockedBy).toBe('worker-remote');
      expect(await db.sql`select process_id from worker_heartbeats order by 1`).toHaveLength(3);
    } finally {
      sleeper.kill();
    }
  });
});
