import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusUsage } from '../../scripts/commands/status.ts';
import { eventually, freePort, killService, parseJson, runCli, runCommand, startService, type Service } from '../support/cli.ts';
import { createDatabaseBefore, createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addJob } from '../support/jobs.ts';
import { parsePrometheus, sampleValue } from '../support/prometheus.ts';

// `afterimage status` over a database of its own per case, and a real `afterimage worker` (with its METRICS_PORT).
// In this process (runCommand), but once as a real process beside the worker.

const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version as string;
const env = (db: TestDatabase) => ({ DATABASE_URL: db.url, ARCHIVE_DIR: '/nonexistent-afterimage-archive' });

describe('afterimage status', () => {
  it('prints its usage on --help and does nothing else', async () => {
    for (const flag of ['--help', '-h']) {
      const result = await runCommand(['status', flag], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      expect(result).toMatchObject({ code: 0, stdout: `${statusUsage}\n`, stderr: '' });
    }
  });

  it('exits 1 naming the pending migrations, and migrates nothing', async () => {
    const db = await createDatabaseBefore(45);
    try {
      const result = await runCommand(['status'], env(db));
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toMatch(/✗ migrations pending: .*045_watchlists\.sql/);
      expect(result.stdout).toMatch(/npx afterimage migrate/);
      const [applied] = await db.sql<{ last: number }[]>`select max(version)::int as last from schema_migrations`;
      expect(applied!.last).toBe(44);
    } finally {
      await db.drop();
    }
  });

  describe('on a current database', () => {
    let db: TestDatabase;
    let worker: Service | undefined;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await killService(worker, 'SIGTERM');
      await db?.drop();
    });

    it('exits 1 when no worker runs, saying how to start one', async () => {
      const result = await runCommand(['status', '--json'], env(db));
      expect(result.code, result.stderr).toBe(1);
      const report = parseJson(result);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([
        { what: expect.stringMatching(/^no worker is running/), fix: expect.stringMatching(/npx afterimage worker/) },
      ]);
    });

    it('exits 0 with a worker, naming it and its version; the worker serves its own /metrics on METRICS_PORT', async () => {
      const metricsPort = await freePort();
      worker = startService(['worker'], { ...env(db), METRICS_PORT: String(metricsPort) });
      const started = worker;
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      // Its listener opens once the worker runs (it starts last).
      await eventually(
        () =>
          fetch(metricsUrl).then(
            (response) => response.ok,
            () => started.child.exitCode !== null && Promise.reject(new Error(started.stderr())),
          ),
        "the worker's /metrics",
        60_000,
      );
      await addJob(db.sql, 'cleanup');
      await eventually(
        async () => (await db.sql`select 1 from graphile_worker.jobs where task_identifier = 'cleanup'`).length === 0,
        'the cleanup job run',
      );

      const result = await runCli(['status', '--json'], env(db));
      expect(result.code, result.stdout).toBe(0);
      const report = parseJson(result);
      expect(Object.keys(report)).toEqual([
        'ok',
        'problems',
        'database',
        'services',
        'workers',
        'queue',
        'oldestWaiting',
        'sources',
        'checksDue',
        'stenograms',
        'disk',
      ]);
      expect(report).toMatchObject({ ok: true, problems: [], database: { migrations: { current: true, pending: [] } }, checksDue: 0 });
      expect(report.workers).toEqual([expect.objectContaining({ pid: worker.child.pid, version, alive: true })]);
      expect(report.services).toContainEqual(expect.objectContaining({ pid: worker.child.pid, role: 'worker', version }));
      expect(report.stenograms).toMatchObject({ store: expect.stringMatching(/^file:/), documents: 0 });

      const human = await runCommand(['status'], env(db));
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^afterimage status: all well/);
      expect(human.stdout).toMatch(new RegExp(`${worker.child.pid}\\s+${version.replace(/\./g, '\\.')}`));

      const scrape = await fetch(metricsUrl);
      expect(scrape.status).toBe(200);
      const families = parsePrometheus(await scrape.text());
      expect(sampleValue(families, 'afterimage_job_duration_seconds_count', { task: 'cleanup', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      expect(families.get('process_resident_memory_bytes')?.type).toBe('gauge');
      // A worker shows its own work; the deployment's queue is the API's to show.
      expect(families.has('afterimage_jobs')).toBe(false);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/health`)).status).toBe(404);
    }, 120_000);

    it('exits 1 when a source has failed for an hour, naming it', async () => {
      await db.sql`insert into channels (channel_id, title) values ('UCstatusstatusstatus0001', 'Failing')`;
      await db.sql`
        insert into crawls (channel_id, kind, status, totals, started_at, finished_at)
        values ('UCstatusstatusstatus0001', 'full', 'complete',
                '{"sources": {"wayback": {"videos": 0, "changed": 0, "error": "wayback answered 503"}, "youtube_api": {"videos": 3, "changed": 3}}}',
                now() - interval '2 hours', now() - interval '2 hours')`;
      const result = await runCommand(['status', '--json'], env(db));
      expect(result.code).toBe(1);
      const report = parseJson(result);
      expect(report.problems).toEqual([
        { what: expect.stringMatching(/^source wayback has failed since .*wayback answered 503/), fix: expect.any(String) },
      ]);
      expect(report.sources).toEqual([
        expect.objectContaining({ source: 'wayback', lastError: 'wayback answered 503', lastSuccessAt: null, failuresLastDay: 1 }),
        expect.objectContaining({ source: 'youtube_api', lastError: null, failingSince: null }),
      ]);
    });
  });
});
