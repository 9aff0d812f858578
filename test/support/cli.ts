import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { keyFile } from '../../core/secrets/serverKey.ts';
import { configSchema } from '../../core/config.ts';
import { embeddedLayout, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { createLogger } from '../../core/log.ts';

const exec = promisify(execFile);

/** The checkout: commands run from here, as an operator would run them. */
const root = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a child command: this process's (PATH and the like) without any setting the
 * service reads, so only what a test passes counts; logs at warn so stderr stays short, and password
 * hashes as cheap as the suite's own (vitest.config.ts).
 */
export function cliEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(configSchema.shape)) delete base[key];
  return { ...base, LOG_LEVEL: 'warn', PASSWORD_HASH_COST: process.env.PASSWORD_HASH_COST, ...env };
}

/**
 * The server key of the tests' own API (.afterimage-test/secret.key), as SECRET_KEY for children with
 * a DATA_DIR of their own that share its database: the processes of a deployment share one key.
 */
export const testServerKey = async () => (await keyFile('.afterimage-test')).toString('utf8');

/** Runs `node scripts/bin.mjs <args>` to completion, `input` on its stdin; a non-zero exit is a result, not an exception. */
export async function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  try {
    const running = exec(process.execPath, ['scripts/bin.mjs', ...args], { cwd: root, env: cliEnv(env), timeout: 60_000 });
    if (input !== undefined) running.child.stdin!.end(input);
    const { stdout, stderr } = await running;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string; killed?: boolean };
    if (typeof failed.code === 'number' && !failed.killed)
      return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    throw error;
  }
}

let commandQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs `afterimage <args>` inside this test process: runAfterimage, what scripts/bin.mjs calls, with
 * `env` as the only settings (as runCli gives a child), collecting stdout, stderr and the exit code.
 * The same command and the same exit codes and output, without starting a process (about a second of
 * CPU each); one at a time, as the environment and the streams are the process's. What only a real
 * process shows (its exit, stdin, signals) stays with runCli: keep one runCli per command.
 */
export function runCommand(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const run = commandQueue.then(async () => {
    const { runAfterimage } = await import('../../scripts/afterimage.ts');
    const saved = { env: process.env, stdout: process.stdout.write, stderr: process.stderr.write, exitCode: process.exitCode };
    const written = { stdout: '', stderr: '' };
    const collect = (stream: keyof typeof written) =>
      ((chunk: string | Uint8Array) => {
        written[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        return true;
      }) as typeof process.stdout.write;
    process.env = cliEnv(env);
    process.stdout.write = collect('stdout');
    process.stderr.write = collect('stderr');
    process.exitCode = 0;
    try {
      await runAfterimage(args);
      return { code: Number(process.exitCode ?? 0), ...written };
    } finally {
      process.env = saved.env;
      process.stdout.write = saved.stdout;
      process.stderr.write = saved.stderr;
      process.exitCode = saved.exitCode;
    }
  });
  commandQueue = run.catch(() => undefined);
  return run;
}

/** stdout parsed as the one JSON document --json promises; fails with the whole output when it is not. */
export function parseJson(result: CliResult): any {
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

/** A long-running command (start, api, worker) whose output is collected as it comes. */
export interface Service {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** Resolves once stdout matches; rejects if the process ends first or after timeoutMs. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The same for stderr, where the service writes its JSON log lines. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

export function startService(args: string[], env: Record<string, string>): Service {
  const child = spawn(process.execPath, ['scripts/bin.mjs', ...args], { cwd: root, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<number | string>((done) => child.on('exit', (code, signal) => done(code ?? signal ?? 'unknown')));
  const waitFor = async (stream: () => string, name: string, pattern: RegExp, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = stream().match(pattern);
      if (match) return match;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `exited (${child.exitCode ?? child.signalCode}) before printing ${pattern} on ${name}\nstdout:\n${out}\nstderr:\n${err}`,
        );
      if (Date.now() > deadline) throw new Error(`no ${pattern} on ${name} within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`);
      await sleep(50);
    }
  };
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStdout: (pattern, timeoutMs) => waitFor(() => out, 'stdout', pattern, timeoutMs),
    waitForStderr: (pattern, timeoutMs) => waitFor(() => err, 'stderr', pattern, timeoutMs),
  };
}

/** Kills a service if it still runs, and waits for it to be gone. */
export async function killService(service: Service | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill(signal);
  await service.exited;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Polls until check() returns something truthy; a functional wait with a generous ceiling, not a timing assertion. */
export async function eventually<T>(check: () => Promise<T> | T, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(100);
  }
}

/** A TCP port nobody listens on right now (asked from the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * A fresh DATA_DIR beside the run's cluster (the global set-up's dataRoot, not the system temp folder: run as root, the
 * embedded cluster runs as the postgres OS user, which must reach it). `remove` stops its embedded cluster first, if one runs.
 * `migrated`: its embedded cluster already initialised and migrated, stopped, as a first start leaves it (a copy
 * of the global set-up's, owner kept); otherwise empty, for the files that test the first start itself.
 */
export async function temporaryDataDir({ migrated = false } = {}): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = join(inject('dataRoot'), `tmp-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  if (migrated) await exec('cp', ['-a', embeddedLayout(inject('migratedDataDir')).pgDir, embeddedLayout(dir).pgDir]);
  return {
    dir,
    async remove() {
      await stopEmbeddedPostgres(dir, createLogger('silent')).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of the postmaster of DATA_DIR's embedded cluster, when one is running. */
export function postmasterPid(dataDir: string): number | undefined {
  const pidFile = join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  return pid > 0 && alive(pid) ? pid : undefined;
}

/** Any process whose command line names this cluster's data folder (postgres -D <dir>/pg). */
export async function postgresProcessesFor(dataDir: string): Promise<string[]> {
  const { stdout } = await exec('ps', ['-eo', 'pid=,args=']);
  const pgDir = join(dataDir, 'pg');
  return stdout.split('\n').filter((line) => /\bpostgres\b/.test(line) && (line.includes(`${pgDir} `) || line.endsWith(pgDir)));
}
