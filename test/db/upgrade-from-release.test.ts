import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { runMigrations } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../core/db/database.ts';
import { migrate } from '../../core/db/migrate.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';
import { createLogger } from '../../core/log.ts';
import { killService, runCli, type Service, startService } from '../support/cli.ts';
import { createEmptyDatabase, type TestDatabase } from '../support/db.ts';

// A database an earlier release made (test/fixtures/upgrade/: migrations 001–024 and data in every
// table) upgraded to this release: a migration that fails leaves it as it was, then `afterimage
// migrate` and a starting API process migrate it together and the API serves the old data.

const fixture = fileURLToPath(new URL('../fixtures/upgrade/8bc703bcf729.sql.gz', import.meta.url));
const log = createLogger('silent');
let db: TestDatabase;
let fixtureKey: string;
let api: Service | undefined;

/** Every table of the schema and its rows' checksum, and the recorded migrations. */
async function snapshot(sql: Sql) {
  const tables = await sql<{ name: string }[]>`
    select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname in ('public', 'graphile_worker') order by 1`;
  const sums: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await sql.unsafe<[{ sum: string }]>(
      `select count(*) || ':' || md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as sum from ${name} t`,
    );
    sums[name] = row.sum;
  }
  const functions = await sql<{ name: string }[]>`
    select p.oid::regprocedure::text as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public' order by 1`;
  return { sums, functions: functions.map((row) => row.name) };
}

const count = async (sql: Sql, table: string) => (await sql.unsafe<[{ n: number }]>(`select count(*)::int as n from ${table}`))[0].n;

describe('upgrade from an earlier release', () => {
  beforeAll(async () => {
    db = await createEmptyDatabase();
    const text = gunzipSync(await readFile(fixture)).toString('utf8');
    fixtureKey = /tsk_\w+/.exec(text)![0];
    await db.sql.unsafe(text);
    // What that release's migrate did after its own files: graphile-worker's schema (the same ^0.17.3),
    // and a job its service had queued.
    await runMigrations({ connectionString: db.url, logger: undefined });
    await db.sql`select graphile_worker.add_job('refresh_status', '{"videoIds": []}'::json, run_at := now() + interval '1 day')`;
  }, 60_000);

  afterAll(async () => {
    await killService(api, 'SIGTERM');
    await db?.drop();
  });

  it('holds what the earlier release wrote: migrations 001–024 and rows in every table', async () => {
    const [{ newest }] = await db.sql<[{ newest: number }]>`select max(version)::int as newest from schema_migrations`;
    expect(newest).toBe(24);
    const { sums } = await snapshot(db.sql);
    const empty = Object.entries(sums).filter(([table, sum]) => table.startsWith('public.') && sum.startsWith('0:'));
    expect(empty).toEqual([]);
  });

  it('a migration that fails leaves the database as it was, and says which migration and why', async () => {
    const before = await snapshot(db.sql);
    const broken = await mkdtemp(join(tmpdir(), 'afterimage-sql-'));
    try {
      await cp(fileURLToPath(new URL('../../sql/', import.meta.url)), broken, { recursive: true });
      const next = Math.max(...(await readMigrations()).map((migration) => migration.version)) + 1;
      const file = `${String(next).padStart(3, '0')}_broken_example.sql`;
      await writeFile(join(broken, file), 'alter table videos add column title text;\n');
      const failure = await migrate(db.sql, db.url, log, broken).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(failure?.message).toMatch(new RegExp(`^migration sql/${file} failed: column "title" of relation "videos" already exists`));
      expect(failure?.message).toContain('the database is as it was');
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
    // Migrations 025… ran before the broken one in the same transaction: none of them stayed.
    expect(await snapshot(db.sql)).toEqual(before);
    expect((await db.sql`select to_regclass('event_streams') as found`)[0]!.found).toBeNull();
  });

  it('migrates with an API process starting at the same time, loses nothing, and the API serves the old data', async () => {
    const before = {
      users: (await db.sql<{ email: string }[]>`select email from users order by email`).map((row) => row.email),
      videos: await db.sql<
        { video_id: string; title: string; status: string }[]
      >`select video_id, title, status from videos order by video_id`,
      summaries: await db.sql<{ id: string; status: string }[]>`select id::text, status from summaries order by id`,
      tables: Object.fromEntries(
        await Promise.all(
          [
            'channels',
            'subtitle_tracks',
            'transcripts',
            'stenograms',
            'events',
            'crawls',
            'video_status_history',
            'video_sources',
            'api_keys',
          ].map(async (table) => [table, await count(db.sql, table)] as const),
        ),
      ),
    };

    api = startService(['api'], { DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    const migrated = await runCli(['migrate', '--json'], { DATABASE_URL: db.url });
    expect(migrated.code, migrated.stderr).toBe(0);
    const [, base] = await api.waitForStderr(/"API listening".*?"url":"(http:[^"]+)"/, 120_000);

    const current = await readMigrations();
    const recorded = await db.sql<{ version: number }[]>`select version from schema_migrations order by version`;
    expect(recorded.map((row) => row.version)).toEqual(current.map((migration) => migration.version));

    // Nothing lost: the same users, videos (ids, titles, statuses), summaries ('ready' is now 'generated'), and counts.
    expect((await db.sql<{ email: string }[]>`select email from users order by email`).map((row) => row.email)).toEqual(before.users);
    expect(await db.sql`select video_id, title, status from videos order by video_id`).toEqual(before.videos);
    expect(await db.sql`select id::text, status from summaries order by id`).toEqual(
      before.summaries.map((summary) => ({ ...summary, status: summary.status === 'ready' ? 'generated' : summary.status })),
    );
    for (const [table, rows] of Object.entries(before.tables)) expect(await count(db.sql, table), table).toBe(rows);
    expect(await count(db.sql, 'graphile_worker.jobs')).toBe(1);

    // Read through the REST API: the old key still signs in, the old rows are served.
    const auth = { authorization: `Bearer ${fixtureKey}` };
    const video = before.videos[0]!;
    const history = await fetch(`${base}/api/videos/${video.video_id}/status-history`, { headers: auth });
    expect(history.status, await history.clone().text()).toBe(200);
    const latest = await fetch(`${base}/api/summary/latest`);
    expect(latest.status).toBe(200);
    const latestBody = JSON.stringify(await latest.json());
    const ready = await db.sql<{ title: string }[]>`select title from summaries where status = 'generated' and not private`;
    expect(ready.length).toBe(3);
    for (const summary of ready) expect(latestBody).toContain(summary.title);
    const tiers = await fetch(`${base}/api/tiers`);
    expect(JSON.stringify(await tiers.json())).toMatch(/90/);
  }, 240_000);
});
