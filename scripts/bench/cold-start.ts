/**
 * How long `npm start`'s command (`node scripts/bin.mjs start`: API + worker, embedded PostgreSQL)
 * takes until GET /api/health answers 200: cold (empty DATA_DIR, so initdb and every migration) and
 * warm (the same DATA_DIR again: the cluster exists and is stopped, the migrations are applied).
 * After each start it sends SIGTERM and times the shutdown (which stops the embedded cluster too).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { embeddedLayout, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { type BenchContext, type Benchmark, repoRoot, sleep } from './lib/harness.ts';
import { freePort } from './lib/processes.ts';
import { median, round } from './lib/stats.ts';

const RUNS = 3;
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 20;
/**
 * Shutdown is measured from a settled service: this long after 'afterimage ready', when the first
 * heartbeat and the first-run administrator's transaction are behind it.
 */
const SETTLE_AFTER_READY_MS = 1_000;

interface StartRun {
  kind: 'cold' | 'warm';
  run: number;
  /** spawn → first 200 from GET /api/health */
  readyMs: number;
  /** spawn → the 'afterimage ready' log line (API listening and worker started) */
  startedMs: number | null;
  /** SIGTERM → process exit */
  shutdownMs: number;
  exitCode: number | null;
  /** Milestones from the service's own log lines, ms after spawn (null when the line did not appear). */
  milestones: {
    /** 'initialising the embedded PostgreSQL cluster' (cold only) */
    initdbStarted: number | null;
    /** 'embedded PostgreSQL started' */
    postgresStarted: number | null;
    /** 'afterimage ready' */
    ready: number | null;
  };
  /** From the log lines' own `ms` fields. */
  reported: { postgresStartMs: number | null; serveMs: number | null };
  /** Derived phases, ms. */
  phases: {
    boot: number | null;
    initdb: number | null;
    postgresStart: number | null;
    migrateAndStart: number | null;
    readyToHealthy: number | null;
  };
  postgresStoppedAfterExit: boolean;
}

/** One GET /api/health on a fresh connection (no keep-alive, so nothing delays the shutdown). */
function healthStatus(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path: '/api/health', agent: false, timeout: 1_000 }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });
}

async function startAndStop(ctx: BenchContext, dataDir: string, kind: StartRun['kind'], run: number): Promise<StartRun> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  delete env.DATABASE_URL; // always the embedded cluster: that is what a cold start creates
  const spawned = performance.now();
  const child = spawn(process.execPath, ['scripts/bin.mjs', 'start'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const since = () => performance.now() - spawned;
  const milestones: StartRun['milestones'] = { initdbStarted: null, postgresStarted: null, ready: null };
  const reported: StartRun['reported'] = { postgresStartMs: null, serveMs: null };
  const stderrTail: string[] = [];
  let exited: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => ((exited = { code, signal, at: performance.now() }), resolve())),
  );

  // stdout carries the first-run administrator key: read and dropped, never stored or printed.
  child.stdout.resume();
  let pending = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    const at = since();
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
      let entry: { msg?: string; ms?: number };
      try {
        entry = JSON.parse(line) as { msg?: string; ms?: number };
      } catch {
        continue;
      }
      if (entry.msg === 'initialising the embedded PostgreSQL cluster') milestones.initdbStarted ??= at;
      if (entry.msg === 'embedded PostgreSQL started') {
        milestones.postgresStarted ??= at;
        reported.postgresStartMs ??= entry.ms ?? null;
      }
      if (entry.msg === 'afterimage ready') {
        milestones.ready ??= at;
        reported.serveMs ??= entry.ms ?? null;
      }
    }
  });

  const failure = (what: string) =>
    new Error(
      `${kind} start ${run}: ${what}; last log lines:\n${stderrTail
        .slice(-8)
        .map((line) => `    ${line}`)
        .join('\n')}`,
    );
  let readyMs: number | undefined;
  try {
    while (readyMs === undefined) {
      if (exited) throw failure(`the service exited (${exited.signal ?? exited.code}) before answering`);
      if (since() > START_TIMEOUT_MS) throw failure(`no 200 from /api/health within ${START_TIMEOUT_MS / 1000} s`);
      if ((await healthStatus(port)) === 200) readyMs = since();
      else await sleep(POLL_INTERVAL_MS);
    }
  } catch (error) {
    child.kill('SIGKILL');
    await exit;
    throw error;
  }

  // Fully started and settled before the SIGTERM: see SETTLE_AFTER_READY_MS.
  while (milestones.ready === null && !exited && since() < START_TIMEOUT_MS) await sleep(POLL_INTERVAL_MS);
  if (milestones.ready === null) {
    child.kill('SIGKILL');
    await exit;
    throw failure("no 'afterimage ready' log line");
  }
  await sleep(SETTLE_AFTER_READY_MS);

  const stopping = performance.now();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exit;
  clearTimeout(timer);
  const shutdownMs = exited!.at - stopping;
  const postgresStoppedAfterExit = !existsSync(join(embeddedLayout(dataDir).pgDir, 'postmaster.pid'));
  if (!postgresStoppedAfterExit) await stopEmbeddedPostgres(dataDir, ctx.log);

  const phase = (value: number | null) => (value === null ? null : round(value, 0));
  const bootEnd = milestones.ready !== null && reported.serveMs !== null ? milestones.ready - reported.serveMs : null;
  const result: StartRun = {
    kind,
    run,
    readyMs: round(readyMs, 0)!,
    startedMs: milestones.ready === null ? null : round(milestones.ready, 0),
    shutdownMs: round(shutdownMs, 0)!,
    exitCode: exited!.code,
    milestones: {
      initdbStarted: phase(milestones.initdbStarted),
      postgresStarted: phase(milestones.postgresStarted),
      ready: phase(milestones.ready),
    },
    reported,
    phases: {
      /** node + tsx + loading the modules, until serve() starts */
      boot: phase(bootEnd),
      /** initdb, until pg_ctl start begins */
      initdb:
        milestones.postgresStarted !== null && milestones.initdbStarted !== null && reported.postgresStartMs !== null
          ? phase(milestones.postgresStarted - reported.postgresStartMs - milestones.initdbStarted)
          : null,
      postgresStart: reported.postgresStartMs,
      /** migrations, the API listening and the worker starting */
      migrateAndStart:
        milestones.ready !== null && milestones.postgresStarted !== null ? phase(milestones.ready - milestones.postgresStarted) : null,
      /** 'afterimage ready' → first 200 (includes the polling interval) */
      readyToHealthy: milestones.ready !== null ? phase(readyMs - milestones.ready) : null,
    },
    postgresStoppedAfterExit,
  };
  ctx.progress(
    `${kind} start ${run}/${RUNS}: healthy after ${result.readyMs} ms, started after ${result.startedMs} ms, shutdown ${result.shutdownMs} ms (exit ${result.exitCode}${postgresStoppedAfterExit ? '' : ', PostgreSQL still running!'})`,
  );
  return result;
}

export const benchmark: Benchmark = {
  name: 'cold-start',
  title: 'Start and shutdown of `npm start`',
  description:
    '`node scripts/bin.mjs start` (API + worker, embedded PostgreSQL) from spawn until GET /api/health answers 200, polled every 20 ms on fresh connections; ' +
    'cold = an empty DATA_DIR (initdb + all migrations), warm = the same DATA_DIR again (the cluster exists and is stopped). ' +
    'Then SIGTERM until the process exits (which includes stopping the embedded cluster). ' +
    "healthy = first 200 from /api/health; started = the 'afterimage ready' log line (API and worker up); phases: boot, initdb, PG start, migrate + start.",
  async run(ctx) {
    // Per process, so that two benchmark runs at once cannot remove each other's clusters.
    const base = join(ctx.dataDir, `cold-start-${process.pid}`);
    await rm(base, { recursive: true, force: true });
    const runs: StartRun[] = [];
    const problems: string[] = [];
    try {
      for (let run = 1; run <= RUNS; run++) {
        const dataDir = join(base, `run-${run}`);
        runs.push(await startAndStop(ctx, dataDir, 'cold', run));
        runs.push(await startAndStop(ctx, dataDir, 'warm', run));
      }
    } finally {
      // A run that failed half-way may have left its cluster running: stop it before removing its files.
      for (let run = 1; run <= RUNS; run++) await stopEmbeddedPostgres(join(base, `run-${run}`), ctx.log).catch(() => undefined);
      await rm(base, { recursive: true, force: true }).catch(() => undefined);
    }
    for (const run of runs) {
      if (run.exitCode !== 0) problems.push(`${run.kind} run ${run.run} exited with ${run.exitCode} after SIGTERM`);
      if (!run.postgresStoppedAfterExit) problems.push(`${run.kind} run ${run.run} left the embedded PostgreSQL running`);
    }

    const of = (kind: StartRun['kind']) => runs.filter((run) => run.kind === kind);
    const medianOf = (kind: StartRun['kind'], pick: (run: StartRun) => number | null): number | null => {
      const values = of(kind)
        .map(pick)
        .filter((value): value is number => value !== null);
      return values.length ? round(median(values), 0) : null;
    };
    const medians = {
      cold: {
        readyMs: medianOf('cold', (run) => run.readyMs),
        startedMs: medianOf('cold', (run) => run.startedMs),
        shutdownMs: medianOf('cold', (run) => run.shutdownMs),
      },
      warm: {
        readyMs: medianOf('warm', (run) => run.readyMs),
        startedMs: medianOf('warm', (run) => run.startedMs),
        shutdownMs: medianOf('warm', (run) => run.shutdownMs),
      },
    };
    return {
      parameters: {
        runs: RUNS,
        command: 'node scripts/bin.mjs start',
        logLevel: 'info',
        pollIntervalMs: POLL_INTERVAL_MS,
        sigtermAfterReadyMs: SETTLE_AFTER_READY_MS,
        dataDir: `${base}/run-N (removed afterwards)`,
      },
      results: { medians, runs },
      targets: [],
      ok: problems.length === 0,
      problems,
    };
  },
};
