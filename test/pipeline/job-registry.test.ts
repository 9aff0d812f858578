import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCrontab, type Task } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { loadConfig } from '../../core/config.ts';
import type { Queryable } from '../../core/db/database.ts';
import { enqueue, enqueueMany } from '../../core/jobs/enqueue.ts';
import { jobPayloads } from '../../core/jobs/registry.ts';
import { createLogger } from '../../core/log.ts';
import { crawlChannelTask } from '../../pipeline/tasks/crawl_channel.ts';
import { crontab } from '../../pipeline/tasks/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { serviceTaskList } from '../support/jobs.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const taskNames = Object.keys(jobPayloads);
const sqlDir = fileURLToPath(new URL('../../sql/', import.meta.url));

describe('the job registry', () => {
  it('knows every task that SQL (migrations, triggers) queues', () => {
    const queued = readdirSync(sqlDir)
      .filter((file) => file.endsWith('.sql'))
      .flatMap((file) =>
        [...readFileSync(join(sqlDir, file), 'utf8').matchAll(/graphile_worker\.add_jobs?\(\s*'([^']+)'/g)].map((match) => ({
          file,
          task: match[1]!,
        })),
      );
    expect(queued).toContainEqual({ file: '010_search_sync.sql', task: 'index_videos' });
    for (const { file, task } of queued) expect(taskNames, `${file} queues ${task}`).toContain(task);
  });

  it('is what the worker runs: the task list has exactly its tasks, and the crontab names only them', async () => {
    expect(Object.keys(await serviceTaskList(db.sql)).sort()).toEqual([...taskNames].sort());
    for (const item of parseCrontab(crontab)) expect(taskNames).toContain(item.task);
  });
});

describe('enqueue', () => {
  it('rejects a payload its task would refuse, before anything is queued', async () => {
    let queried = false;
    const tx = (() => {
      queried = true;
      throw new Error('no statement expected');
    }) as unknown as Queryable;
    // @ts-expect-error a crawl id is queued as a string
    await expect(enqueue(tx, 'crawl_channel', { crawlId: 7, step: 0 })).rejects.toBeInstanceOf(ZodError);
    await expect(enqueueMany(tx, 'check_status', [{ videoIds: ['not a video id'] }])).rejects.toBeInstanceOf(ZodError);
    await expect(enqueueMany(tx, 'check_status', [{ videoIds: [] }])).rejects.toBeInstanceOf(ZodError);
    expect(queried).toBe(false);
  });

  it('queues the payload as given, with the options, and answers job ids in payload order', async () => {
    const id = await enqueue(
      db.sql,
      'crawl_channel',
      { crawlId: '42', step: 1, cursor: 'abc' },
      { jobKey: 'registry-test', maxAttempts: 5, priority: 3 },
    );
    const [job] = await db.sql<{ payload: unknown; key: string; maxAttempts: number; priority: number }[]>`
      select payload, key, max_attempts as "maxAttempts", priority from graphile_worker._private_jobs where id = ${id}`;
    expect(job).toEqual({ payload: { crawlId: '42', step: 1, cursor: 'abc' }, key: 'registry-test', maxAttempts: 5, priority: 3 });

    const ids = await enqueueMany(db.sql, 'fetch_subtitles', [{ videoId: 'registry001' }, { videoId: 'registry002' }], {
      jobKey: (payload) => `subtitles:${payload.videoId}`,
      jobKeyMode: 'unsafe_dedupe',
    });
    const again = await enqueueMany(db.sql, 'fetch_subtitles', [{ videoId: 'registry002' }], {
      jobKey: (payload) => `subtitles:${payload.videoId}`,
      jobKeyMode: 'unsafe_dedupe',
    });
    expect(again).toEqual([ids[1]]);
    const rows = await db.sql<
      { id: string; payload: { videoId: string } }[]
    >`select id::text, payload from graphile_worker._private_jobs where id = any(${ids}::bigint[])`;
    expect(ids.map((jobId) => rows.find((row) => row.id === jobId)!.payload.videoId)).toEqual(['registry001', 'registry002']);
  });
});

describe('a task', () => {
  it('parses its payload with the registry schema: a crawl id queued as a number is refused', async () => {
    const task: Task = crawlChannelTask({
      sql: db.sql,
      sources: [],
      log: createLogger('silent'),
      sourceWaitBudgetMs: loadConfig({}).SOURCE_WAIT_BUDGET_MS,
    });
    const helpers = { job: { attempts: 1, max_attempts: 5 } } as unknown as Parameters<Task>[1];
    await expect(task({ crawlId: 1, step: 0 }, helpers)).rejects.toBeInstanceOf(ZodError);
    await expect(task({ crawlId: '999999', step: 0 }, helpers)).resolves.toBeUndefined(); // unknown crawl: nothing to do
  });
});

describe('upgrading (sql/014_crawl_job_payloads.sql)', () => {
  it('rewrites waiting crawl steps queued with a numeric crawl id, and nothing else', async () => {
    const [numeric] = await db.sql<
      { id: string }[]
    >`select (graphile_worker.add_job('crawl_channel', '{"crawlId": 77, "step": 0}'::json, job_key => 'upgrade-test')).id::text as id`;
    const current = await enqueue(db.sql, 'crawl_channel', { crawlId: '78', step: 2, cursor: 'c' });
    const other = await enqueue(db.sql, 'fetch_subtitles', { videoId: 'upgrade0001' });
    await db.sql.unsafe(readFileSync(join(sqlDir, '014_crawl_job_payloads.sql'), 'utf8'));
    const rows = await db.sql<
      { id: string; payload: unknown }[]
    >`select id::text, payload from graphile_worker._private_jobs where id = any(${[numeric!.id, current, other]}::bigint[])`;
    const payloadOf = (id: string) => rows.find((row) => row.id === id)!.payload;
    expect(payloadOf(numeric!.id)).toEqual({ crawlId: '77', step: 0 });
    expect(jobPayloads.crawl_channel.parse(payloadOf(numeric!.id))).toEqual({ crawlId: '77', step: 0 });
    expect(payloadOf(current)).toEqual({ crawlId: '78', step: 2, cursor: 'c' });
    expect(payloadOf(other)).toEqual({ videoId: 'upgrade0001' });
  });
});
