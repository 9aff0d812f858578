/**
 * The database going away under a running `afterimage api` (its own embedded cluster, DATA_DIR under
 * the benchmarks' folder): per run, kill -9 of the postmaster, then the time until a database route
 * (GET /api/features with a key) and GET /api/health answer 503, and, once the cluster is started
 * again, until both answer 200 from the same process. One more run sends SIGTERM (smart shutdown)
 * and times health's 503. Requests are polled every 20 ms on fresh connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { answerOf, msUntil, restartCluster, signalPostmaster, type Answer } from '../../test/kit/databaseOutage.ts';
import { type BenchContext, type Benchmark, repoRoot, target } from './lib/harness.ts';
import { freePort } from './lib/processes.ts';
import { median } from './lib/stats.ts';

const RUNS = 5;

interface OutageRun {
  run: number;
  /** kill -9 → first 503 SERVICE_UNAVAILABLE from the database route */
  routeUnavailableMs: number;
  /** kill -9 → first 503 from health */
  healthUnavailableMs: number;
  /** the slowest of 20 concurrent requests to the database route while it is down */
  slowestDuringOutageMs: number;
  /** the cluster accepting connections again → both answer 200 */
  recoveredMs: number;
}

/** `afterimage api` on a fresh DATA_DIR; resolves with the first-run administrator key once it is ready. */
function startApi(dataDir: string, port: number): { child: ChildProcess; key: Promise<string> } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['scripts/bin.mjs', 'api'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const key = new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const found = /\n\s+(tsk_[A-Za-z0-9]{48})\n/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`afterimage api exited (${code}) before printing its key`)));
  });
  return { child, key };
}

async function outageRun(
  ctx: BenchContext,
  dataDir: string,
  route: () => Promise<Answer>,
  health: () => Promise<Answer>,
  run: number,
): Promise<OutageRun> {
  const serving = async () => (await route()).status === 200 && (await health()).status === 200;
  await msUntil(serving, 'a serving API', 30_000);
  const killed = performance.now();
  const pid = signalPostmaster(dataDir, 'SIGKILL');
  const routeUnavailableMs = await msUntil(async () => (await route()).status === 503, '503 from the database route');
  const healthUnavailableMs =
    Math.round(performance.now() - killed) + (await msUntil(async () => (await health()).status === 503, '503 from health'));
  const slowestDuringOutageMs = Math.max(...(await Promise.all([...Array(20)].map(() => route()))).map((answer) => answer.ms));
  await restartCluster(dataDir, pid);
  const recoveredMs = await msUntil(serving, '200 again', 30_000);
  const result = { run, routeUnavailableMs, healthUnavailableMs, slowestDuringOutageMs, recoveredMs };
  ctx.progress(
    `kill -9 run ${run}/${RUNS}: route 503 after ${routeUnavailableMs} ms, health 503 after ${healthUnavailableMs} ms, 200 again ${recoveredMs} ms after the restart`,
  );
  return result;
}

export const benchmark: Benchmark = {
  name: 'db-outage',
  title: 'The database going away under a running API',
  description:
    '`afterimage api` on its own embedded cluster; the postmaster is killed (kill -9), then GET /api/features (with a key) and GET /api/health are polled every 20 ms ' +
    "until they answer 503; the cluster is started again and both are polled until 200. A last run sends SIGTERM to the postmaster (smart shutdown) and times health's 503.",
  async run(ctx) {
    const dataDir = join(ctx.dataDir, `db-outage-${process.pid}`);
    await rm(dataDir, { recursive: true, force: true });
    const port = await freePort();
    const api = startApi(dataDir, port);
    const problems: string[] = [];
    const runs: OutageRun[] = [];
    let smartShutdownHealthMs: number | null = null;
    try {
      const key = await api.key;
      const base = `http://127.0.0.1:${port}`;
      const route = () => answerOf(`${base}/api/features`, { 'X-API-Key': key });
      const health = () => answerOf(`${base}/api/health`);
      for (let run = 1; run <= RUNS; run++) runs.push(await outageRun(ctx, dataDir, route, health, run));

      await msUntil(async () => (await health()).status === 200, 'a healthy API', 30_000);
      const pid = signalPostmaster(dataDir, 'SIGTERM');
      smartShutdownHealthMs = await msUntil(async () => (await health()).status === 503, '503 from health in a smart shutdown');
      signalPostmaster(dataDir, 'SIGINT');
      await restartCluster(dataDir, pid);
      ctx.progress(`smart shutdown: health 503 after ${smartShutdownHealthMs} ms`);
    } catch (error) {
      problems.push((error as Error).message);
    } finally {
      api.child.kill('SIGKILL');
      await stopEmbeddedPostgres(dataDir, ctx.log).catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    }
    const spread = (pick: (run: OutageRun) => number) => ({ median: median(runs.map(pick)), max: Math.max(...runs.map(pick)) });
    const summary = {
      routeUnavailableMs: spread((run) => run.routeUnavailableMs),
      healthUnavailableMs: spread((run) => run.healthUnavailableMs),
      slowestDuringOutageMs: spread((run) => run.slowestDuringOutageMs),
      recoveredMs: spread((run) => run.recoveredMs),
    };
    const late = runs.filter((run) => run.routeUnavailableMs > 2_000 || run.healthUnavailableMs > 2_000 || run.recoveredMs > 2_000);
    if (late.length) problems.push(`runs over the 2 s target: ${late.map((run) => run.run).join(', ')}`);
    return {
      parameters: { runs: RUNS, pollIntervalMs: 20, probeIntervalMs: 500, connectTimeoutMs: 2_000 },
      results: { summary, runs, smartShutdownHealthMs },
      targets: [
        target('database route 503 after kill -9, slowest run (ms)', summary.routeUnavailableMs.max, { atMost: 2_000 }),
        target('health 503 after kill -9, slowest run (ms)', summary.healthUnavailableMs.max, { atMost: 2_000 }),
        target('200 again after the restart, slowest run (ms)', summary.recoveredMs.max, { atMost: 2_000 }),
      ],
      ok: problems.length === 0,
      problems,
    };
  },
};
