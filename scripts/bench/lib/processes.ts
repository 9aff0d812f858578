/** The service's own processes (`node scripts/bin.mjs <role>`) as subjects: children, so /proc reads their memory and CPU alone. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Sql } from '../../../core/db/database.ts';
import { repoRoot, sleep } from './harness.ts';
import { postmasterOf } from './usage.ts';

/** An `afterimage api` that answers from its database alone: an empty archive folder, no YouTube key, no Wayback. */
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

/** The pid of the PostgreSQL server behind `sql` when it runs on this machine (for its CPU time). */
export async function postmasterPid(sql: Sql): Promise<number | undefined> {
  const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  return postmasterOf(backend!.pid);
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** The base URL of an `api` or `start` process (its 'API listening' line). */
  url: string | undefined;
  /** performance.now() at spawn and at 'afterimage ready'. */
  spawnedAt: number;
  readyAt: number;
  /** When each log message named in `waitFor` was first seen. */
  seenAt: Map<string, number>;
  /** Log lines of level warn and above. */
  warnings: Array<Record<string, unknown>>;
  /** The last stderr lines, for error messages. */
  tail(): string;
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves once it has exited. */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts `node [nodeArgs] scripts/bin.mjs <role>` with `env` over this process's (less `unset`) and waits for
 * 'afterimage ready' and the messages in `waitFor`. `openFiles` raises its soft limit first (bash execs node: same pid).
 */
export async function startService(
  role: 'api' | 'worker' | 'start',
  env: Record<string, string>,
  options: { openFiles?: number; timeoutMs?: number; nodeArgs?: string[]; waitFor?: string[]; unset?: string[] } = {},
): Promise<ServiceProcess> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...env };
  for (const name of options.unset ?? []) delete fullEnv[name];
  const args = [...(options.nodeArgs ?? []), 'scripts/bin.mjs', role];
  const raise = `if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt ${options.openFiles} ]; then ulimit -n ${options.openFiles} || exit 97; fi; exec "$0" "$@"`;
  const spawnedAt = performance.now();
  const [command, argv]: [string, string[]] = options.openFiles
    ? ['bash', ['-c', raise, process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawn(command, argv, { cwd: repoRoot, env: fullEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  const lines: string[] = [];
  const warnings: Array<Record<string, unknown>> = [];
  const seenAt = new Map<string, number>();
  const waitFor = options.waitFor ?? [];
  let url: string | undefined;
  let readyAt: number | undefined;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((resolve) => child.once('exit', (code, signal) => resolve(void (exited = { code, signal }))));
  let pending = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const complete = (pending + chunk).split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) {
      lines.push(line);
      if (lines.length > 30) lines.shift();
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (entry.level === 'warn' || entry.level === 'error') warnings.push(entry);
      if (entry.msg === 'API listening' && typeof entry.url === 'string') url ??= entry.url;
      if (entry.msg === 'afterimage ready') readyAt ??= performance.now();
      if (typeof entry.msg === 'string' && waitFor.includes(entry.msg) && !seenAt.has(entry.msg)) seenAt.set(entry.msg, performance.now());
    }
  });
  const tail = () => lines.map((line) => `    ${line.slice(0, 400)}`).join('\n');
  const stop = async (stopTimeoutMs = 15_000) => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    await exit;
    clearTimeout(timer);
  };
  while (readyAt === undefined || waitFor.some((msg) => !seenAt.has(msg))) {
    if (exited) throw new Error(`\`afterimage ${role}\` exited (${exited.signal ?? exited.code}) before it was ready:\n${tail()}`);
    if (performance.now() - spawnedAt > timeoutMs) {
      await stop(0);
      throw new Error(`\`afterimage ${role}\` was not ready within ${timeoutMs / 1000} s:\n${tail()}`);
    }
    await sleep(20);
  }
  return { child, pid: child.pid!, url, spawnedAt, readyAt, seenAt, warnings, tail, exited: () => exited, stop };
}
