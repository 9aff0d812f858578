import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../core/config.ts';
import { connect } from '../../core/db/database.ts';
import { embeddedUrl } from '../../core/db/embedded.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { killService, parseJson, runCli, runCommand, startService, temporaryDataDir, type Service } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// Where `afterimage import` writes when no database is named: into the one service running on this
// machine, else nowhere (exit 2, naming the services and how to pick). Real services, started here,
// found through this test's own registry (XDG_RUNTIME_DIR).

let fixture: ArchiveFixture;
let dataDir: Awaited<ReturnType<typeof temporaryDataDir>>;
let other: TestDatabase;
let runtimeDir: string;
const services: Service[] = [];

/**
 * The import as an operator types it: no DATA_DIR, no DATABASE_URL, unless given; in this process, or
 * as a real process (`spawn`) where the process itself matters (its pid, the embedded cluster it starts).
 */
const importFolder = (flags: string[] = [], env: Record<string, string> = {}, spawn = false) =>
  (spawn ? runCli : runCommand)(['import', fixture.dir, '--json', ...flags], { XDG_RUNTIME_DIR: runtimeDir, ...env });

const videosIn = async (url: string) => {
  const sql = connect(url, { max: 1, role: 'test' });
  try {
    return (await sql<{ n: number }[]>`select count(*)::int as n from videos`)[0]!.n;
  } finally {
    await sql.end();
  }
};

async function startApi(env: Record<string, string>): Promise<Service> {
  const service = startService(['api'], { PORT: '0', LOG_LEVEL: 'info', XDG_RUNTIME_DIR: runtimeDir, ...env });
  services.push(service);
  await service.waitForStderr(/afterimage ready/, 60_000);
  return service;
}

describe('afterimage import: which database', () => {
  beforeAll(async () => {
    [fixture, dataDir, other] = await Promise.all([
      createArchiveFixture({ videos: 4, seed: 'import-target', legacyChannel: false }),
      temporaryDataDir({ migrated: true }),
      createTestDatabase(),
    ]);
    runtimeDir = join(dataDir.dir, 'xdg-runtime');
    await mkdir(runtimeDir, { recursive: true, mode: 0o700 });
  }, 60_000);

  afterAll(async () => {
    for (const service of services) await killService(service, 'SIGTERM');
    await fixture?.cleanup();
    await other?.drop();
    await dataDir?.remove();
  });

  it('with no service running and none named, writes nothing and exits 2, saying how to pick', async () => {
    const result = await importFolder();
    expect(result.code, result.stderr).toBe(2);
    expect(parseJson(result).error.message).toMatch(/no Afterimage service is running on this machine/);
    expect(parseJson(result).error.message).toContain('--data-dir DIR');
    expect(parseJson(result).error.message).toContain('DATABASE_URL=');
  });

  it('ignores the record of a service that died, also when its pid now belongs to another process', async () => {
    const registry = join(runtimeDir, 'afterimage', 'services');
    await mkdir(registry, { recursive: true });
    const dead = { pid: 999_999_999, role: 'start', startedAt: new Date().toISOString(), database: { embedded: true, location: '/gone' } };
    // This test's own pid is alive, but it started at another time than the record says.
    const reused = { ...dead, pid: process.pid, processStart: '1' };
    await writeFile(join(registry, `${dead.pid}.json`), JSON.stringify(dead));
    await writeFile(join(registry, `${process.pid}.json`), JSON.stringify(reused));
    const result = await importFolder([], {}, true); // in this process, its own pid's record would be skipped
    expect(result.code).toBe(2);
    expect(parseJson(result).error.message).toMatch(/no Afterimage service is running/);
    expect(await readdir(registry)).toEqual([]);
  });

  it('with one service running, writes into its database and names it', async () => {
    const service = await startApi({ DATA_DIR: dataDir.dir });
    const before = await videosIn(embeddedUrl(dataDir.dir));
    const result = await importFolder();
    expect(result.code, result.stderr).toBe(3);
    const summary = parseJson(result);
    expect(summary.database).toEqual({ embedded: true, location: dataDir.dir });
    expect(summary.runningService).toMatchObject({
      pid: service.child.pid,
      role: 'api',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    expect(summary.new).toBeGreaterThan(0);
    expect(await videosIn(embeddedUrl(dataDir.dir))).toBe(before + summary.new);

    // afterimage archives finds the same database, and the service's ARCHIVE_DIR.
    const archives = await runCommand(['archives', 'list', '--json'], { XDG_RUNTIME_DIR: runtimeDir });
    expect(parseJson(archives)).toMatchObject({ archiveDir: join(dataDir.dir, 'archive'), roots: [{ path: fixture.dir }] });

    const text = await runCommand(['import', fixture.dir], { XDG_RUNTIME_DIR: runtimeDir });
    expect(text.stderr).toContain(`importing into the running service's database (pid ${service.child.pid} (api) at http://127.0.0.1:`);
    expect(text.stdout).toContain(
      `into:      the embedded PostgreSQL in ${dataDir.dir} (DATA_DIR), the running service's (pid ${service.child.pid})`,
    );
  }, 120_000);

  it('with services on two databases, writes nothing and exits 2, naming both and how to pick each', async () => {
    const second = await startApi({ DATABASE_URL: other.url });
    const first = services[0]!;
    const result = await importFolder();
    expect(result.code, result.stderr).toBe(2);
    const message: string = parseJson(result).error.message;
    const otherShown = describeConfig(loadConfig({ DATABASE_URL: other.url })).DATABASE_URL;
    expect(message).toContain('2 Afterimage services run on this machine, on different databases');
    expect(message).toMatch(
      new RegExp(`pid ${first.child.pid} \\(api\\) at http://127\\.0\\.0\\.1:\\d+: the embedded PostgreSQL in ${dataDir.dir}`),
    );
    expect(message).toContain(`pid ${second.child.pid} (api)`);
    expect(message).toContain(`${otherShown} (DATABASE_URL)`);
    expect(message).toContain(`--data-dir ${dataDir.dir}, or DATABASE_URL=${otherShown}`);
    expect(await videosIn(other.url)).toBe(0);

    // Named, the database is used whatever runs.
    const named = await importFolder([], { DATABASE_URL: other.url });
    expect(named.code, named.stderr).toBe(3);
    expect(await videosIn(other.url)).toBe(parseJson(named).new);
  }, 120_000);

  it('a running service that connects with a password: asks for DATABASE_URL, and its record holds no password', async () => {
    for (const service of services.splice(0)) await killService(service, 'SIGTERM');
    const withPassword = other.url.replace('postgresql://postgres@', 'postgresql://postgres:s3cret-pw@');
    const service = await startApi({ DATABASE_URL: withPassword });
    const record = await readFile(join(runtimeDir, 'afterimage', 'services', `${service.child.pid}.json`), 'utf8');
    expect(record).not.toContain('s3cret-pw');
    const result = await importFolder();
    expect(result.code).toBe(2);
    expect(parseJson(result).error.message).toMatch(/connects with a password, which it does not record; run this again with DATABASE_URL/);
    expect(result.stdout).not.toContain('s3cret-pw');
  }, 120_000);

  it('a database named with --data-dir is used with no service running', async () => {
    for (const service of services.splice(0)) await killService(service, 'SIGTERM');
    const result = await importFolder(['--data-dir', dataDir.dir], {}, true);
    expect(result.code, result.stderr).toBe(3); // the kit's malformed file
    // The folder the service above imported: everything is there already.
    expect(parseJson(result)).toMatchObject({ database: { embedded: true, location: dataDir.dir }, runningService: null, new: 0 });
    expect(parseJson(result).unchanged).toBe(parseJson(result).videos);
  }, 120_000);
});
