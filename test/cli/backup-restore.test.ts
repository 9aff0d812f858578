import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../core/db/database.ts';
import { embeddedUrl, ensureEmbeddedPostgres } from '../../core/db/embedded.ts';
import { createLogger } from '../../core/log.ts';
import { freePort, killService, parseJson, runCli, runCommand, type Service, startService, temporaryDataDir } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// The restore drill as an operator runs it: `afterimage backup` of a running service's embedded
// cluster while rows are written into it, `afterimage restore` into a new DATA_DIR, the service
// started there; and the backups a restore must refuse. The backup and the restore of the drill run as real
// processes beside the service, as an operator's do; the rest in this process (runCommand).

type DataDir = Awaited<ReturnType<typeof temporaryDataDir>>;
let source: DataDir;
let restored: DataDir;
let refused: DataDir;
let runtimeDir: string;
const services: Service[] = [];
const pools: Sql[] = [];
let backupFile: string;

/** Each table of the schema: its row count and an md5 of its rows in one order. */
async function tableChecksums(sql: Sql): Promise<Map<string, string>> {
  const tables = await sql<{ name: string }[]>`
    select format('%I.%I', schemaname, tablename) as name from pg_tables
    where schemaname in ('public', 'graphile_worker') order by 1`;
  const sums = new Map<string, string>();
  for (const { name } of tables) {
    const [row] = await sql.unsafe<[{ sum: string }]>(
      `select count(*) || ':' || md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as sum from ${name} t`,
    );
    sums.set(name, row.sum);
  }
  return sums;
}

async function startOn(dataDir: string): Promise<{ service: Service; url: string }> {
  const port = await freePort();
  const service = startService(['start'], {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    XDG_RUNTIME_DIR: runtimeDir,
  });
  services.push(service);
  await service.waitForStderr(/afterimage ready/, 90_000);
  return { service, url: `http://127.0.0.1:${port}` };
}

const pool = (dataDir: string) => {
  const sql = connect(embeddedUrl(dataDir), { max: 2, role: 'test' });
  pools.push(sql);
  return sql;
};

describe('afterimage backup and restore', () => {
  beforeAll(async () => {
    [source, restored, refused] = await Promise.all([temporaryDataDir({ migrated: true }), temporaryDataDir(), temporaryDataDir()]);
    runtimeDir = join(source.dir, 'xdg-runtime');
    await mkdir(runtimeDir, { recursive: true, mode: 0o700 });
    backupFile = join(source.dir, 'drill.tar.gz');
  }, 60_000);

  afterAll(async () => {
    for (const sql of pools) await sql.end({ timeout: 5 });
    for (const service of services) await killService(service, 'SIGTERM');
    await Promise.all([source?.remove(), restored?.remove(), refused?.remove()]);
  });

  it('--help prints the usage on stdout and exits 0, doing nothing', async () => {
    for (const command of ['backup', 'restore']) {
      // An empty DATA_DIR: a command that ran instead of answering would make a cluster there.
      const help = await runCommand([command, '--help'], { DATA_DIR: refused.dir });
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toContain(`usage: afterimage ${command}`);
    }
    expect(existsSync(join(refused.dir, 'pg'))).toBe(false);
  });

  it('backs up a running service while rows are written, and the restore holds every row committed before it started, none missing', async () => {
    const generated = await runCommand(['bench', 'generate', '--videos', '200', '--json'], { DATA_DIR: source.dir });
    expect(generated.code, generated.stderr).toBe(0);
    const accounts = await runCommand(['users', 'create', '--email', 'drill@example.com', '--tier', 'pro', '--admin', '--json'], {
      DATA_DIR: source.dir,
    });
    expect(accounts.code, accounts.stderr).toBe(0);
    const issued = await runCommand(['keys', 'create', '--user', 'drill@example.com', '--json'], { DATA_DIR: source.dir });
    expect(issued.code, issued.stderr).toBe(0);
    const { key } = parseJson(issued);
    const stenogram = join(source.dir, 'stenograms', randomUUID(), 'dQw4w9WgXcQ.md');
    await mkdir(join(stenogram, '..'), { recursive: true });
    await writeFile(join(source.dir, 'stenograms', '.afterimage-store'), '{}\n');
    await writeFile(stenogram, '# a stenogram\n');
    await startOn(source.dir);

    const sql = pool(source.dir);
    await sql`create table backup_drill (n integer primary key, written_at timestamptz not null default clock_timestamp())`;
    // The writer appends numbered rows one committed statement at a time, all through the backup.
    let committed = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        await sql`insert into backup_drill (n) values (${committed + 1})`;
        committed += 1;
      }
    })();
    while (committed < 50) await new Promise((done) => setTimeout(done, 10));

    const before = await tableChecksums(sql);
    const committedBefore = committed;
    const backup = await runCli(['backup', '--data-dir', source.dir, '--out', backupFile, '--json'], { XDG_RUNTIME_DIR: runtimeDir });
    const committedAfter = committed;
    const after = await tableChecksums(sql);
    writing = false;
    await writer;
    expect(backup.code, backup.stderr).toBe(0);
    const summary = parseJson(backup);
    expect(summary.file).toBe(backupFile);
    expect(summary.bytes).toBeGreaterThan(0);
    expect(backup.stderr).toMatch(/MB\/s/); // the progress and its speed
    expect(committedAfter).toBeGreaterThan(committedBefore); // the writer did write while the backup ran
    process.stderr.write(`backup drill: ${JSON.stringify(summary)}\n`);

    // A service runs on the source: restoring over it is refused.
    const over = await runCommand(['restore', backupFile, '--data-dir', source.dir], { XDG_RUNTIME_DIR: runtimeDir });
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/an Afterimage service runs on .*stop it/);

    const restore = await runCli(['restore', backupFile, '--data-dir', restored.dir, '--json'], { XDG_RUNTIME_DIR: runtimeDir });
    expect(restore.code, restore.stderr).toBe(0);
    expect(await readFile(join(restored.dir, 'secret.key'))).toEqual(await readFile(join(source.dir, 'secret.key')));
    expect(await readFile(stenogram.replace(source.dir, restored.dir), 'utf8')).toBe('# a stenogram\n');

    // Read before a service starts on it (its worker records its crontab, its heartbeat): the cluster as restored.
    await ensureEmbeddedPostgres(restored.dir, createLogger('silent'));
    const copy = pool(restored.dir);
    const numbers = (await copy<{ n: number }[]>`select n from backup_drill order by n`).map((row) => row.n);
    // A gap-free prefix, holding every row committed before the backup started and none after it ended.
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, index) => index + 1));
    expect(numbers.length).toBeGreaterThanOrEqual(committedBefore);
    expect(numbers.length).toBeLessThanOrEqual(committedAfter);

    // Every table nothing wrote to during the backup is restored as it was, row for row.
    const restoredSums = await tableChecksums(copy);
    const unchanged = [...before.keys()].filter((table) => table !== 'public.backup_drill' && before.get(table) === after.get(table));
    expect(unchanged).toEqual(expect.arrayContaining(['public.videos', 'public.channels', 'public.users', 'public.schema_migrations']));
    for (const table of unchanged) expect(restoredSums.get(table), table).toBe(before.get(table));

    // The service starts on the restored folder (same server key) and serves what was restored.
    const [video] = await copy<[{ id: string; changes: number }]>`
      select video_id as id, (select count(*)::int from video_status_history h where h.video_id = v.video_id) as changes
      from videos v order by video_id limit 1`;
    const restoredService = await startOn(restored.dir);
    const health = await fetch(`${restoredService.url}/api/health`);
    expect(health.status).toBe(200);
    const history = await fetch(`${restoredService.url}/api/videos/${video.id}/status-history`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(history.status, await history.clone().text()).toBe(200);
    expect((await history.json()).data.history).toHaveLength(video.changes);
    expect(Number(before.get('public.videos')!.split(':')[0])).toBe(200);
  }, 300_000);

  it('refuses a damaged backup (one byte changed, or truncated) before writing anything, and a folder holding a database', async () => {
    const size = (await stat(backupFile)).size;
    const changed = join(source.dir, 'changed.tar.gz');
    await copyFile(backupFile, changed);
    const bytes = await readFile(changed);
    const middle = Math.floor(size / 2);
    bytes[middle] = bytes[middle]! ^ 0x01;
    await writeFile(changed, bytes);
    const truncated = join(source.dir, 'truncated.tar.gz');
    await copyFile(backupFile, truncated);
    await truncate(truncated, Math.floor(size * 0.9));

    for (const damaged of [changed, truncated]) {
      const result = await runCommand(['restore', damaged, '--data-dir', refused.dir], { XDG_RUNTIME_DIR: runtimeDir });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/is damaged|truncated/);
      expect(result.stderr).toContain('nothing was restored');
      expect(existsSync(join(refused.dir, 'pg'))).toBe(false);
      expect(existsSync(join(refused.dir, 'secret.key'))).toBe(false);
    }
    // A folder that holds a database already (the drill's restore, its service stopped) is refused too.
    for (const service of services) await killService(service, 'SIGTERM');
    const again = await runCommand(['restore', backupFile, '--data-dir', restored.dir], { XDG_RUNTIME_DIR: runtimeDir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds a database .*restore into a new folder \(--data-dir NEW_DIR\)/);
  }, 120_000);

  describe('with DATABASE_URL', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('backup says to use pg_dump of the server major version, and what else to copy', async () => {
      const result = await runCommand(['backup'], { DATABASE_URL: db.url });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/pg_dump 17 or newer/);
      expect(result.stderr).toMatch(/stenogram store/);
      expect(result.stderr).toMatch(/server key/);
    });
  });
});
