import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../core/db/database.ts';
import { embeddedUrl } from '../../core/db/embedded.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';
import {
  eventually,
  freePort,
  killService,
  parseJson,
  postgresProcessesFor,
  postmasterPid,
  runCli,
  startService,
  temporaryDataDir,
  type Service,
} from '../support/cli.ts';
import { addJob, jobRow, lockJob } from '../support/jobs.ts';

// The embedded PostgreSQL as operators meet it: real `afterimage` processes sharing one DATA_DIR,
// no DATABASE_URL. The tests run in order and share the data folder, as one operator's day would.

let dataDir: { dir: string; remove(): Promise<void> };
let port: number;
const services: Service[] = [];
let sql: Sql | undefined;
let adminKey = '';

const env = (extra: Record<string, string> = {}) => ({ DATA_DIR: dataDir.dir, PORT: String(port), ...extra });
const base = () => `http://127.0.0.1:${port}`;
const status = (path: string, key?: string) =>
  fetch(`${base()}${path}`, { headers: key ? { 'X-API-Key': key } : {} }).then((response) => response.status);

function service(args: string[]): Service {
  const started = startService(args, env({ LOG_LEVEL: 'info' }));
  services.push(started);
  return started;
}

/** The JSON log lines of a service's stderr. */
const logLines = (running: Service) =>
  running
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string; workerIds?: string[] });

const ready = (running: Service) => running.waitForStderr(/"msg":"afterimage ready"/, 60_000);

async function stopsCleanly(running: Service): Promise<void> {
  running.child.kill('SIGTERM');
  expect(await running.exited).toBe(0);
  expect(postmasterPid(dataDir.dir)).toBeUndefined();
  expect(existsSync(join(dataDir.dir, 'pg', 'postmaster.pid'))).toBe(false);
  expect(await postgresProcessesFor(dataDir.dir)).toEqual([]);
}

beforeAll(async () => {
  dataDir = await temporaryDataDir();
  port = await freePort();
});

afterAll(async () => {
  for (const running of services) await killService(running);
  await sql?.end({ timeout: 5 }).catch(() => undefined);
  await dataDir?.remove();
});

describe('embedded PostgreSQL', () => {
  it('migrate on an empty DATA_DIR initialises a cluster, applies every migration, and leaves no server running', async () => {
    const result = await runCli(['migrate', '--json'], env());
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toEqual({ applied: (await readMigrations()).map((migration) => migration.file) });
    expect(existsSync(join(dataDir.dir, 'pg', 'PG_VERSION'))).toBe(true);
    expect(postmasterPid(dataDir.dir)).toBeUndefined();
    expect(await postgresProcessesFor(dataDir.dir)).toEqual([]);
  });

  it('start prints the first-run administrator key once and serves the API with it', async () => {
    const start = service(['start']);
    const [, key] = await start.waitForStdout(/First run[\s\S]*?\n\s+(tsk_[A-Za-z0-9]{48})\n/, 60_000);
    adminKey = key!;
    expect(start.stdout().match(/First run/g)).toHaveLength(1);
    expect(new Set(start.stdout().match(/tsk_[A-Za-z0-9]+/g))).toEqual(new Set([adminKey]));
    expect(await status('/api/health')).toBe(200);
    expect(await status('/api/features', adminKey)).toBe(200);
    expect(await status('/api/features', `tsk_${'x'.repeat(48)}`)).toBe(401);

    // The one-time link signs the administrator in on the website: its page's form, posted with its token.
    const [, link] = start.stdout().match(/\n\s+(http:\/\/\S+\/login\/once\/[A-Za-z0-9_-]{43})\n/) ?? [];
    expect(link).toBeDefined();
    const path = new URL(link!).pathname;
    const page = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const signedIn = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      redirect: 'manual',
      body: `_csrf=${csrf}`,
      headers: { Accept: 'text/html', Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toMatch(
      /^afterimage_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax$/,
    );
  });

  it('operator commands reach the running service database and leave the shared cluster running', async () => {
    const postmaster = postmasterPid(dataDir.dir);
    expect(postmaster).toBeDefined();

    const list = await runCli(['keys', 'list', '--json'], env());
    expect(list.code, list.stderr).toBe(0);
    expect(parseJson(list)).toEqual([
      expect.objectContaining({ prefix: adminKey.slice(0, 10), email: 'admin@afterimage.localhost', scope: 'L4' }),
    ]);
    expect(list.stdout).not.toContain(adminKey);

    const user = await runCli(['users', 'create', '--email', 'second@example.org', '--tier', 'plus', '--json'], env());
    expect(user.code, user.stderr).toBe(0);

    // The commands have exited; the cluster the service uses is the same one, still up.
    expect(postmasterPid(dataDir.dir)).toBe(postmaster);
    expect(await status('/api/health')).toBe(200);
    expect(await status('/api/features', adminKey)).toBe(200);
  });

  it('SIGTERM stops start with exit 0, and the cluster with it', async () => {
    await stopsCleanly(services[0]!);
  });

  it('a second start keeps the data and prints no new administrator key', async () => {
    const start = service(['start']);
    await ready(start);
    expect(await status('/api/features', adminKey)).toBe(200);
    expect(start.stdout()).not.toMatch(/First run|tsk_/);
    sql = connect(embeddedUrl(dataDir.dir), { max: 3, role: 'test' });
    const users = await sql<{ email: string }[]>`select email from users order by email`;
    expect(users.map((row) => row.email)).toEqual(['admin@afterimage.localhost', 'second@example.org']);
  });

  it('jobs a killed worker held are run by the next worker at its start', async () => {
    const killed = services[1]!;
    // Keep the running service's worker inside a cleanup job (its task waits on this table lock), then kill it.
    const blocker = await sql!.reserve();
    let inFlight: string;
    let heldBy: string;
    try {
      await blocker`begin`;
      await blocker`lock table usage_counters in access exclusive mode`;
      inFlight = await addJob(sql!, 'cleanup');
      heldBy = await eventually(async () => (await jobRow(sql!, inFlight))?.lockedBy, 'the worker to take the job', 30_000);
      killed.child.kill('SIGKILL');
      expect(await killed.exited).toBe('SIGKILL');
    } finally {
      await blocker`rollback`.catch(() => undefined);
      blocker.release();
    }
    // The cluster outlives the killed process; the job stays held by the dead worker.
    expect(postmasterPid(dataDir.dir)).toBeDefined();
    expect((await jobRow(sql!, inFlight))!.lockedBy).toBe(heldBy);
    // And one abandoned long ago by a worker nobody remembers.
    const abandoned = await addJob(sql!, 'cleanup');
    await lockJob(sql!, abandoned, 'worker-dead', 600);

    const worker = service(['worker']);
    await ready(worker);
    const freed = logLines(worker)
      .filter((line) => line.level === 'warn')
      .flatMap((line) => line.workerIds ?? []);
    expect(freed).toContain('worker-dead');
    expect(freed).toContain(heldBy); // at start, not a minute later once the killed worker's heartbeat is stale
    await eventually(
      async () => (await jobRow(sql!, inFlight)) === undefined && (await jobRow(sql!, abandoned)) === undefined,
      'both jobs to complete',
      30_000,
    );
  });

  it('the last process to stop stops the cluster', async () => {
    await sql!.end({ timeout: 5 });
    sql = undefined;
    await stopsCleanly(services[2]!);
  });
});
