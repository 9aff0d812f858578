/**
 * The service's own processes (`node scripts/bin.mjs api|worker`) as benchmark subjects: started as
 * child processes so that their memory and CPU can be read from /proc on their own, apart from the
 * harness and the load it generates.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Sql } from '../../../core/db/database.ts';
import { repoRoot, sleep } from './harness.ts';
import { postmasterOf } from './usage.ts';

/** A TCP port free on 127.0.0.1 right now (the OS picks it; a service started next binds it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  return typeof address === 'object' && address ? address.port : 0;
}

/**
 * The environment of an `afterimage api` under measurement that answers from its database alone: an empty
 * archive folder of its own (`<name>-no-archive`), no YouTube key and no Wayback, so no request waits on a source.
 */
export function sourcelessApiEnv(dataDir: string, databaseUrl: string, name: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ARCHIVE_DIR: join(dataDir, `${name}-no-archive`),
    YOUTUBE_API_KEY: '',
    WAYBACK_ENABLED: 'false',
  };
}

/** The pid of the PostgreSQL server behind `sql`, when it runs on this machine (for its CPU time). */
export async function postmasterPid(sql: Sql): Promise<number | undefined> {
  const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  return postmasterOf(backend!.pid);
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** The base URL of an `api` or `start` process (from its 'API listening' log line), else undefined. */
  url: string | undefined;
  /** performance.now() at spawn and when 'afterimage ready' was logged. */
  spawnedAt: number;
  readyAt: number;
  /** performance.now() when each log message named in `waitFor` was first seen. */
  seenAt: Map<string, number>;
  /** Log lines (parsed JSON) of level warn and above seen so far. */
  warnings: Array<Record<string, unknown>>;
  /** The last stderr lines, for error messages. */
  tail(): string;
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves when the process has exited. */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts `node scripts/bin.mjs <role>` with `env` on top of this process's environment and waits for
 * its 'afterimage ready' log line, and for the log messages named in `waitFor`; `unset` names variables of this process's environment the child must not see. `nodeArgs` go to node before the script (e.g. --cpu-prof). With `openFiles`, the child's soft limit of open files is raised to
 * at least that many first (through bash, which then execs node: the pid stays the child's).
 */
export async function startService(
  role: 'api' | 'worker' | 'start',
  env: Record<string, string>,
  options: { openFiles?: number; timeoutMs?: number; nodeArgs?: string[]; waitFor?: string[]; unset?: string[] } = {},
): Promise<ServiceProcess> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...env };
  for (const name of options.unset ?? []) delete fullEnv[name];
  const spawnedAt = performance.now();
  const args = [...(options.nodeArgs ?? []), 'scripts/bin.mjs', role];
  const child = options.openFiles
    ? spawn(
        'bash',
        [
          '-c',
          `if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt ${options.openFiles} ]; then ulimit -n ${options.openFiles} || exit 97; fi; exec "$0" "$@"`,
          process.execPath,
          ...args,
        ],
        {
          cwd: repoRoot,
          env: fullEnv,
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      )
    : spawn(process.execPath, args, { cwd: repoRoot, env: fullEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  const tail: string[] = [];
  const warnings: Array<Record<string, unknown>> = [];
  let url: string | undefined;
  let readyAt: number | undefined;
  const seenAt = new Map<string, number>();
  const waitFor = options.waitFor ?? [];
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  let pending = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > 30) tail.shift();
      if (!line.startsWith('{')) continue;
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (entry.level === 'warn' || entry.level === 'error') warnings.push(entry);
      // The API's address: on 'API listening' (or, from older versions, 'afterimage ready').
      if ((entry.msg === 'API listening' || entry.msg === 'afterimage ready') && typeof entry.url === 'string') url ??= entry.url;
      if (entry.msg === 'afterimage ready') readyAt ??= performance.now();
      if (typeof entry.msg === 'string' && waitFor.includes(entry.msg) && !seenAt.has(entry.msg)) seenAt.set(entry.msg, performance.now());
    }
  });
  const describeTail = () =>
    tail
      .slice(-12)
      .map((line) => `    ${line.slice(0, 400)}`)
      .join('\n');
  const stop = async (stopTimeoutMs = 15_000) => {
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exit;
      clearTimeout(timer);
    }
  };
  while (readyAt === undefined || waitFor.some((msg) => !seenAt.has(msg))) {
    if (exited)
      throw new Error(
        `\`afterimage ${role}\` exited (${exited.signal ?? exited.code}) before it was ready; last log lines:\n${describeTail()}`,
      );
    if (performance.now() - spawnedAt > timeoutMs) {
      child.kill('SIGKILL');
      await exit;
      throw new Error(`\`afterimage ${role}\` was not ready within ${timeoutMs / 1000} s; last log lines:\n${describeTail()}`);
    }
    await sleep(20);
  }
  return {
    child,
    pid: child.pid!,
    url,
    spawnedAt,
    readyAt,
    seenAt,
    warnings,
    tail: describeTail,
    exited: () => exited,
    stop,
  };
}
