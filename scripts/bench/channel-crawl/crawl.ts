import { buildServices } from '../../../core/services/buildServices.ts';
import { startApi } from '../../../api/server.ts';
import { createEventHub } from '../../../api/sse/hub.ts';
import { cachedApiKeys } from '../../../core/accounts/cachedApiKeys.ts';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { loadConfig } from '../../../core/config.ts';
import { crawlStream } from '../../../core/events/events.ts';
import { warmUpSources } from '../../../core/sources/configured.ts';
import { cachedTiers } from '../../../core/tiers/loadTiers.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { type BenchContext, packageVersion } from '../lib/harness.ts';
import { postmasterPid, startService } from '../lib/processes.ts';
import { median, percentile, round } from '../lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf, memorySampler } from '../lib/usage.ts';
import { CRAWL_TIMEOUT_MS, WORKER_CONCURRENCY, type CrawlRun } from './shape.ts';
import { readStreamUntilDone, type PreparedSource } from './sources.ts';

export async function crawlOnce(
  ctx: BenchContext,
  prepared: PreparedSource,
  problems: string[],
): Promise<{ run: CrawlRun; channelId: string; config: ReturnType<typeof loadConfig> }> {
  const db = await ctx.database();
  const sql = db.pool({ max: 3, role: 'bench' });
  const user = await createUser(sql, { email: `crawl-${prepared.kind}@example.org`, tier: 'pro', isAdmin: false });
  const { key } = await createApiKey(sql, { userId: user.id });
  await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, channelSearchesPerHour: null } });
  const postmaster = await postmasterPid(sql);

  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    DATA_DIR: ctx.dataDir,
    WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    WAYBACK_ENABLED: 'false',
    YOUTUBE_API_URL: '',
    ...prepared.env,
  };
  const config = loadConfig({ ...env, LOG_LEVEL: 'warn' });
  const worker = await startService('worker', env, { waitFor: ['source ready'] });
  const workerWarmUpMs = worker.seenAt.get('source ready')! - worker.readyAt;
  const workerBaseline = memoryOf(worker.pid);
  ctx.progress(
    `${prepared.kind}: worker pid ${worker.pid} ready in ${Math.round(worker.readyAt - worker.spawnedAt)} ms, RSS ${round(workerBaseline?.rssMiB ?? NaN, 0)} MiB`,
  );

  // As scripts/commands/service.ts wires the API: its pool, a counter pool without synchronous commit, one hub.
  const apiSql = db.pool({ max: config.DATABASE_POOL_SIZE, role: 'api' });
  const counterSql = db.pool({
    max: Math.max(2, Math.ceil(config.DATABASE_POOL_SIZE / 2)),
    role: 'api-counters',
    connection: { synchronous_commit: 'off' },
  });
  const hub = await createEventHub(apiSql, ctx.log);
  const tiers = cachedTiers(apiSql);
  const apiKeys = await cachedApiKeys(apiSql, { tiers });
  const apiServices = await buildServices(config, { sql: apiSql, log: ctx.log });
  const apiWarmUpStarted = performance.now();
  await warmUpSources(apiServices.sources, ctx.log);
  const apiWarmUpMs = performance.now() - apiWarmUpStarted;
  ctx.progress(`${prepared.kind}: sources warmed up in ${Math.round(workerWarmUpMs)} ms (worker) and ${Math.round(apiWarmUpMs)} ms (API)`);
  const api = await startApi(
    {
      config,
      sql: apiSql,
      counterSql,
      tiers,
      apiKeys,
      log: ctx.log,
      version: packageVersion,
      startedAt: new Date(),
      hub,
      ...apiServices,
    },
    0,
    '127.0.0.1',
  );
  const base = `http://127.0.0.1:${api.port}`;
  const sampler = memorySampler(worker.pid, 100);
  const workerCpuStart = cpuOf(worker.pid);
  const cpuStart = cpuSnapshot(postmaster);

  let run: CrawlRun;
  let channelId = '';
  try {
    const rssBeforePost = process.memoryUsage().rss / 2 ** 20;
    const posted = performance.now();
    let firstVideoAt = Number.NaN;
    const response = await fetch(`${base}/api/search`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ query: prepared.query }),
    });
    const postMs = performance.now() - posted;
    const rssAfterPost = process.memoryUsage().rss / 2 ** 20;
    const body = (await response.json()) as { data?: { sseEndpointUrl: string; channelId: string }; error?: unknown };
    if (response.status !== 200 || !body.data)
      throw new Error(`POST /api/search answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    channelId = body.data.channelId;
    const stream = await readStreamUntilDone(
      `${base}${body.data.sseEndpointUrl}`,
      key,
      CRAWL_TIMEOUT_MS,
      () => (firstVideoAt = performance.now()),
    );
    const done = performance.now();
    const cpuEnd = cpuSnapshot(postmaster);
    const workerCpuEnd = cpuOf(worker.pid);
    sampler.stop();
    const workerMemory = memoryOf(worker.pid);
    if (stream.status !== 200) throw new Error(`the stream answered ${stream.status}`);
    if (stream.final !== 'search:complete')
      problems.push(`${prepared.kind}: the stream ended with ${stream.final || 'nothing'} ${stream.finalData.slice(0, 200)}`);

    const otherJobs = await sql<{ task: string; n: number }[]>`
      select t.identifier as task, count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier <> 'crawl_channel' group by t.identifier order by t.identifier`;
    const [stored] = await sql<{ n: number }[]>`select count(*)::int as n from videos where channel_id = ${channelId}`;
    const [crawl] = await sql<{ id: string; seconds: number; status: string }[]>`
      select id::text, extract(epoch from finished_at - started_at)::float8 as seconds, status from crawls where channel_id = ${channelId}`;
    const steps = await sql<{ stage: string; at: number }[]>`
      select payload->>'stage' as stage, extract(epoch from created_at)::float8 * 1000 as at
      from events where stream = ${crawlStream(crawl!.id)} and type = 'search:progress' order by seq`;
    const jobsBySource: Record<string, number> = {};
    for (const step of steps) jobsBySource[step.stage] = (jobsBySource[step.stage] ?? 0) + 1;
    const gaps = steps
      .slice(1)
      .map((step, index) => step.at - steps[index]!.at)
      .sort((a, b) => a - b);
    const cpu = cpuDelta(cpuStart, cpuEnd);
    const seconds = (done - posted) / 1000;
    const streamingSeconds = (done - firstVideoAt) / 1000;
    if (stored!.n !== prepared.videosExpected)
      problems.push(`${prepared.kind}: ${stored!.n} videos stored, expected ${prepared.videosExpected}`);
    if (stream.videos.size !== stored!.n)
      problems.push(`${prepared.kind}: ${stream.videos.size} search:video events on the stream for ${stored!.n} stored videos`);
    run = {
      source: prepared.kind,
      label: prepared.label,
      setupMs: Math.round(prepared.setupMs),
      videosExpected: prepared.videosExpected,
      videosStored: stored!.n,
      videosStreamed: stream.videos.size,
      finalEvent: stream.final,
      endToEndSeconds: round(seconds, 2)!,
      videosPerSecond: round(stored!.n / seconds, 0)!,
      warmUpMs: { worker: Math.round(workerWarmUpMs), api: Math.round(apiWarmUpMs) },
      postMs: round(postMs, 1)!,
      firstVideoSeconds: round((firstVideoAt - posted) / 1000, 2)!,
      streamingSeconds: round(streamingSeconds, 2)!,
      streamingVideosPerSecond: round(stream.videos.size / streamingSeconds, 0)!,
      crawlSeconds: round(crawl!.seconds, 2)!,
      crawlJobs: steps.length,
      jobsBySource,
      stepIntervalMs: gaps.length
        ? { median: round(median(gaps), 1)!, p90: round(percentile(gaps, 90), 1)!, max: round(gaps[gaps.length - 1]!, 1)! }
        : null,
      worker: {
        baselineRssMiB: round(workerBaseline?.rssMiB ?? NaN, 1)!,
        peakRssMiB: round(workerMemory?.peakMiB ?? NaN, 1)!,
        maxSampledRssMiB: round(sampler.maxSince(), 1)!,
        cpuSeconds: workerCpuStart === undefined || workerCpuEnd === undefined ? null : round((workerCpuEnd - workerCpuStart) / 1e6, 2),
      },
      cpuSeconds: {
        worker: workerCpuStart === undefined || workerCpuEnd === undefined ? null : round((workerCpuEnd - workerCpuStart) / 1e6, 2),
        postgres: cpu.postgresUs === null ? null : round(cpu.postgresUs / 1e6, 2),
        harness: round(cpu.selfUs / 1e6, 2)!,
        machine: cpu.machineBusyUs === null ? null : round(cpu.machineBusyUs / 1e6, 2),
        other:
          cpu.machineBusyUs === null || workerCpuStart === undefined || workerCpuEnd === undefined
            ? null
            : round(Math.max(0, cpu.machineBusyUs - (workerCpuEnd - workerCpuStart) - (cpu.postgresUs ?? 0) - cpu.selfUs) / 1e6, 2),
      },
      harnessRssMiB: { beforePost: round(rssBeforePost, 0)!, afterPost: round(rssAfterPost, 0)! },
      sourceRequests: prepared.requests(),
      otherJobsQueued: Object.fromEntries(otherJobs.map((row) => [row.task, row.n])),
      workerWarnings: worker.warnings.map((entry) => String(entry.msg)).slice(0, 10),
    };
    ctx.progress(
      `${prepared.kind}: ${run.videosStored} videos in ${run.endToEndSeconds} s (${run.videosPerSecond}/s), first video after ${run.firstVideoSeconds} s, ` +
        `${run.crawlJobs} jobs, worker peak RSS ${run.worker.peakRssMiB} MiB`,
    );
  } finally {
    sampler.stop();
    await worker.stop();
    await api.close();
    await hub.close();
    await apiKeys.close();
  }
  return { run, channelId, config };
}
