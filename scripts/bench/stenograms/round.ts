import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sql } from '../../../core/db/database.ts';
import { type BenchContext, type BenchDatabase, sleep } from '../lib/harness.ts';
import { nodeArgsKnob } from '../lib/knobs.ts';
import { postmasterPid, type ServiceProcess, startService } from '../lib/processes.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf, memorySampler, resetPeak } from '../lib/usage.ts';
import { analyse, type Measured } from './analyse.ts';
import { eventReads, type Notification, wallClock } from './events.ts';
import { activitySampler, backendDelta, clusterWriters, databaseBackendTimes, serviceEnv, startApiProcess } from './services.ts';
import { STREAMS, USERS } from './shape.ts';
import { generateStream, heldBackStream, prepare, type Prepared } from './streams.ts';

/** The burst itself: STREAMS POSTs at once, with the processes' CPU and memory around it. */
async function burst(
  db: BenchDatabase,
  base: URL,
  prepared: Prepared,
  pids: { api: number; worker: number },
  postmaster: number | undefined,
  sql: Sql,
) {
  const samplers = { api: memorySampler(pids.api, 100), worker: memorySampler(pids.worker, 100) };
  try {
    const peakReset = resetPeak(pids.api) && resetPeak(pids.worker);
    const since = performance.now();
    const wall = wallClock();
    const activity = activitySampler(process.env.STENOGRAMS_PG_ACTIVITY === '1' ? db.pool({ max: 1, role: 'bench-activity' }) : undefined);
    const cluster = clusterWriters(sql);
    const cpuStart = {
      api: cpuOf(pids.api),
      worker: cpuOf(pids.worker),
      machine: cpuSnapshot(postmaster),
      backends: databaseBackendTimes(postmaster, db.name),
    };
    const started = performance.now();
    const records = await Promise.all(
      prepared.videos.slice(0, STREAMS).map((video) => generateStream(base, video.videoId, video.user, prepared.users[video.user]!.key)),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuEnd = {
      api: cpuOf(pids.api),
      worker: cpuOf(pids.worker),
      machine: cpuSnapshot(postmaster),
      backends: databaseBackendTimes(postmaster, db.name),
    };
    const sampledActivity = process.env.STENOGRAMS_PG_ACTIVITY === '1' ? await activity.stop() : null;
    const writers = await cluster.stop();
    samplers.api.stop();
    samplers.worker.stop();
    const end = { api: memoryOf(pids.api)!, worker: memoryOf(pids.worker)! };
    return {
      records,
      seconds,
      wall,
      cluster: writers,
      activity: sampledActivity,
      memory: {
        peakReset,
        peak: { api: end.api.peakMiB, worker: end.worker.peakMiB },
        end: { api: end.api.rssMiB, worker: end.worker.rssMiB },
        sampled: { api: samplers.api.maxSince(since), worker: samplers.worker.maxSince(since) },
      },
      cpu: {
        apiUs: cpuStart.api === undefined || cpuEnd.api === undefined ? null : cpuEnd.api - cpuStart.api,
        workerUs: cpuStart.worker === undefined || cpuEnd.worker === undefined ? null : cpuEnd.worker - cpuStart.worker,
        delta: cpuDelta(cpuStart.machine, cpuEnd.machine),
        databaseUs: postmaster === undefined ? null : backendDelta(cpuStart.backends, cpuEnd.backends),
      },
    };
  } finally {
    samplers.api.stop();
    samplers.worker.stop();
  }
}

export async function streamRound(ctx: BenchContext, minutes: number, problems: string[], withHold: boolean) {
  const label = `${STREAMS} × ${minutes} min`;
  const db = await ctx.database();
  const sql = db.pool({ max: 3, role: 'bench' });
  const prepared = await prepare(sql, minutes);
  ctx.progress(
    `${label}: ${prepared.videos.length} videos with a stored transcript (${prepared.cues} cues, ${prepared.videos.reduce((sum, video) => sum + video.words, 0)} words), ${USERS} users, in ${Math.round(prepared.setupMs)} ms`,
  );
  const dataDir = await mkdtemp(join(tmpdir(), 'afterimage-bench-stenograms-'));
  const env = serviceEnv(db.url, dataDir);
  const postmaster = await postmasterPid(sql);
  const notifications: Notification[] = [];
  const listener = await sql.listen('afterimage_events', (stream) => {
    if (stream.startsWith('stenogram:')) notifications.push({ stream, at: performance.now() });
  });
  let api: (ServiceProcess & { base: URL }) | undefined;
  const worker = await startService('worker', env, { nodeArgs: nodeArgsKnob('STENOGRAMS_WORKER_NODE_ARGS') });
  try {
    ctx.progress(`worker pid ${worker.pid}, ready in ${Math.round(worker.readyAt - worker.spawnedAt)} ms`);
    api = await startApiProcess(ctx, env);
    const readsBefore = await eventReads(sql);
    const idle = { api: memoryOf(api.pid)!.rssMiB, worker: memoryOf(worker.pid)!.rssMiB };
    // One stream at a time first: the route's first request out of the way, then the idle reference.
    const one = (video: Prepared['videos'][number]) =>
      generateStream(api!.base, video.videoId, video.user, prepared.users[video.user]!.key);
    const first = await one(prepared.videos[STREAMS]!);
    if (first.final !== 'stenogram:complete') problems.push(`${label}: the first stream ended with ${first.final ?? first.error}`);
    const alone = await one(prepared.videos[STREAMS + 1]!);
    await sleep(300);
    const measured = await burst(db, api.base, prepared, { api: api.pid, worker: worker.pid }, postmaster, sql);
    await sleep(100); // slack for the last NOTIFY (the last commit's came before its client had the event)
    const warnings = { api: api.warnings.map((entry) => String(entry.msg)).slice(0, 10), worker: [] as string[] };
    // Stopped before counting: a session's statistics are flushed when it ends.
    await api.stop();
    const reads = (await eventReads(sql)) - readsBefore;
    let held: Measured['held'] = null;
    if (withHold) {
      api = await startApiProcess(ctx, env);
      const video = prepared.videos[STREAMS + 2]!;
      const heldRun = await heldBackStream(sql, api.base, video, prepared.users[video.user]!.key);
      await api.stop();
      held = { ...heldRun, eventReads: (await eventReads(sql)) - readsBefore - reads };
    }
    await listener.unlisten();
    await worker.stop();
    warnings.worker = worker.warnings.map((entry) => String(entry.msg)).slice(0, 10);
    const result = await analyse(
      sql,
      join(dataDir, 'stenograms'),
      {
        label,
        minutes,
        prepared,
        alone,
        notifications,
        eventReads: reads,
        held,
        warnings,
        ...measured,
        memory: { ...measured.memory, idle },
      },
      problems,
    );
    ctx.progress(
      `${label}: ${result.completed}/${STREAMS} complete in ${result.totalSeconds} s (per stream p50 ${result.perStreamMs.complete.p50} ms, p99 ${result.perStreamMs.complete.p99} ms); ` +
        `commit → client p99 ${result.delivery.fromCommitMs.all?.p99} ms; API peak ${result.memoryMiB.api.peak} MiB, worker peak ${result.memoryMiB.worker.peak} MiB`,
    );
    return result;
  } finally {
    await listener.unlisten().catch(() => undefined);
    await api?.stop();
    await worker.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
