/**
 * `npm start`'s command (`node scripts/bin.mjs start`: API + worker, embedded PostgreSQL) from spawn until
 * GET /api/health answers 200: cold (an empty DATA_DIR: initdb and every migration) and warm (the same
 * DATA_DIR again), then SIGTERM until it has exited, the embedded cluster stopped with it.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { embeddedLayout, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { type BenchContext, type Benchmark, sleep } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { startService } from './lib/processes.ts';
import { median, round } from './lib/stats.ts';

const RUNS = numberKnob('COLD_START_RUNS', 3);
/** Shutdown is timed from a settled service, once the first heartbeat and the first-run administrator are behind it. */
const SETTLE_MS = 1_000;

async function startAndStop(ctx: BenchContext, dataDir: string, problems: string[]) {
  // Always the embedded cluster: that is what a cold start creates.
  const service = await startService(
    'start',
    { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
    { unset: ['DATABASE_URL'], timeoutMs: 120_000 },
  );
  let healthyAt = Number.NaN;
  while (Number.isNaN(healthyAt)) {
    const status = await fetch(`${service.url}/api/health`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) healthyAt = performance.now();
    else await sleep(20);
  }
  await sleep(SETTLE_MS);
  const stopping = performance.now();
  await service.stop(60_000);
  const shutdownMs = performance.now() - stopping;
  if (service.exited()?.code !== 0) problems.push(`exited with ${service.exited()?.signal ?? service.exited()?.code} after SIGTERM`);
  if (existsSync(join(embeddedLayout(dataDir).pgDir, 'postmaster.pid'))) {
    problems.push('the embedded PostgreSQL was still running after the service exited');
    await stopEmbeddedPostgres(dataDir, ctx.log);
  }
  return { healthyMs: healthyAt - service.spawnedAt, readyMs: service.readyAt - service.spawnedAt, shutdownMs };
}

export const benchmark: Benchmark = {
  name: 'cold-start',
  title: 'Start and shutdown of `npm start`',
  description:
    '`node scripts/bin.mjs start` from spawn until GET /api/health answers 200 (polled every 20 ms after the API listens) and until its ' +
    "'afterimage ready' line; cold = an empty DATA_DIR (initdb + all migrations), warm = the same DATA_DIR again. " +
    `Then, ${SETTLE_MS / 1000} s later, SIGTERM until the process exits (which includes stopping the embedded cluster). Medians of ${RUNS} runs.`,
  async run(ctx) {
    const base = join(ctx.dataDir, `cold-start-${process.pid}`);
    const runs = {
      cold: [] as Array<Awaited<ReturnType<typeof startAndStop>>>,
      warm: [] as Array<Awaited<ReturnType<typeof startAndStop>>>,
    };
    const problems: string[] = [];
    try {
      for (let run = 1; run <= RUNS; run++) {
        for (const kind of ['cold', 'warm'] as const) {
          const measured = await startAndStop(ctx, join(base, `run-${run}`), problems);
          runs[kind].push(measured);
          ctx.progress(
            `${kind} ${run}/${RUNS}: healthy after ${Math.round(measured.healthyMs)} ms, shutdown ${Math.round(measured.shutdownMs)} ms`,
          );
        }
      }
    } finally {
      // A run that failed half-way may have left its cluster running.
      for (let run = 1; run <= RUNS; run++) await stopEmbeddedPostgres(join(base, `run-${run}`), ctx.log).catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    }
    const medians = (list: typeof runs.cold) => ({
      healthyMs: round(median(list.map((run) => run.healthyMs)), 0),
      readyMs: round(median(list.map((run) => run.readyMs)), 0),
      shutdownMs: round(median(list.map((run) => run.shutdownMs)), 0),
    });
    return {
      parameters: { runs: RUNS, command: 'node scripts/bin.mjs start', sigtermAfterHealthyMs: SETTLE_MS },
      results: { cold: medians(runs.cold), warm: medians(runs.warm) },
      targets: [],
      ok: problems.length === 0,
      problems,
    };
  },
};
