import { randomUUID } from 'node:crypto';
import { parseCrontab } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crontab } from '../../pipeline/tasks/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addJob, jobRow, runJobsOnce, serviceTaskList } from '../support/jobs.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('cleanup task', () => {
  it('deletes usage counters older than 2 days and heartbeats older than 1 day, and keeps the rest', async () => {
    const subject = randomUUID();
    const counterAges = { deleted: ['3 days', '2 days 1 hour'], kept: ['1 day 23 hours', '1 hour', '0 seconds'] };
    for (const age of [...counterAges.deleted, ...counterAges.kept]) {
      await db.sql`
        insert into usage_counters (subject, limit_name, window_start, used)
        values (${subject}, 'requestsPerMinute', now() - ${age}::interval, 1)`;
    }
    for (const age of ['2 days', '1 day 1 hour', '23 hours', '0 seconds']) {
      await db.sql`
        insert into worker_heartbeats (process_id, hostname, pid, last_seen_at)
        values (${`beat ${age}`}, 'host', 1, now() - ${age}::interval)`;
    }
    // An unrelated subject's recent counter must survive too.
    await db.sql`insert into usage_counters (subject, limit_name, window_start, used) values (${randomUUID()}, 'apiStenogramsPerDay', now(), 3)`;

    // Run as the worker runs it: a 'cleanup' job taken by graphile-worker with the service's task list.
    const job = await addJob(db.sql, 'cleanup');
    await runJobsOnce(db.url, db.sql);
    expect(await jobRow(db.sql, job)).toBeUndefined(); // succeeded (a failed job would stay, with last_error)

    const keptCounters = await db.sql<{ old: boolean }[]>`
      select window_start < now() - interval '1 day' as old from usage_counters where subject = ${subject} order by window_start`;
    expect(keptCounters).toEqual([{ old: true }, { old: false }, { old: false }]); // the 47-hour one, the hour-old one, the current one
    expect(await db.sql`select 1 from usage_counters where limit_name = 'apiStenogramsPerDay'`).toHaveLength(1);
    const keptBeats = await db.sql<{ process_id: string }[]>`select process_id from worker_heartbeats order by process_id`;
    expect(keptBeats.map((row) => row.process_id)).toEqual(['beat 0 seconds', 'beat 23 hours']);
  });

  it('forgets failed look-ups of unknown videos after a week, and keeps pending and recent ones', async () => {
    await db.sql`
      insert into video_lookups (video_id, state, error, checked_at) values
        ('oldFailed01', 'failed', 'no configured source knows this video', now() - interval '8 days'),
        ('newFailed01', 'failed', 'no configured source knows this video', now() - interval '6 days'),
        ('pending0001', 'pending', null, null)`;
    const job = await addJob(db.sql, 'cleanup');
    await runJobsOnce(db.url, db.sql);
    expect(await jobRow(db.sql, job)).toBeUndefined();
    const kept = await db.sql<{ video_id: string }[]>`select video_id from video_lookups order by video_id`;
    expect(kept.map((row) => row.video_id)).toEqual(['newFailed01', 'pending0001']);
  });
});

describe('crontab', () => {
  it('parses with graphile-worker and names only tasks of the task list', async () => {
    const items = parseCrontab(crontab);
    expect(items.length).toBeGreaterThan(0);
    const tasks = Object.keys(await serviceTaskList(db.sql));
    for (const item of items) expect(tasks).toContain(item.task);
  });

  it('runs cleanup hourly, backfilling up to a day, with one attempt per run', () => {
    const cleanup = parseCrontab(crontab).find((item) => item.task === 'cleanup');
    expect(cleanup).toBeDefined();
    expect(cleanup!.options.backfillPeriod).toBe(24 * 60 * 60 * 1000);
    expect(cleanup!.options.maxAttempts).toBe(1);
    const digest = (hour: number, min: number) => ({ min, hour, date: 15, month: 6, dow: 3 });
    expect(cleanup!.match(digest(13, 0))).toBe(true);
    expect(cleanup!.match(digest(0, 0))).toBe(true);
    expect(cleanup!.match(digest(13, 30))).toBe(false);
  });
});
