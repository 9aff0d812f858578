/**
 * A full crawl of one 20,000-video channel, end to end, from each local source in turn: the YouTube
 * Data API v3 stand-in (test/kit/servers/youtube-api-server.ts, 50 videos a page) and a yt-dlp
 * archive directory (test/kit/archive-fixture.ts, ARCHIVE_DIR).
 *
 * The API runs in this process (startApi with configuredSources(loadConfig(...)), as `afterimage api`
 * wires it) together with the Data API stand-in; the worker runs as `node scripts/bin.mjs worker` in a
 * child process, so its memory is its own (VmHWM from /proc). POST /api/search starts the crawl; the
 * stream is read to search:complete.
 *
 * Afterwards the two halves of a crawl step are replayed alone, in this process, to see where the time
 * goes: the source's pages (a fresh source like the worker's) and the store transactions
 * (upsertVideos + appendEvents, batch by batch, on a fresh database), plus the same store with larger
 * batches as a what-if.
 */
import { get } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi } from '../../api/server.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { loadConfig } from '../../core/config.ts';
import type { Queryable, Sql } from '../../core/db/database.ts';
import { appendEvents, crawlStream } from '../../core/events/events.ts';
import { announcesCaptions, captionInfoOf, searchEvents, type SearchEvent } from '../../core/events/searchEvents.ts';
import { configuredSources, warmUpSources } from '../../core/sources/configured.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../../core/sources/types.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { upsertChannel } from '../../core/videos/upsertChannel.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createArchiveFixture } from '../../test/kit/archive-fixture.ts';
import { start as startYoutubeApiServer } from '../../test/kit/servers/youtube-api-server.ts';
import { type BenchContext, type Benchmark, packageVersion, target } from './lib/harness.ts';
import { postmasterPid, startService } from './lib/processes.ts';
import { median, percentile, round } from './lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf, memorySampler } from './lib/usage.ts';
import { createSseParser } from './lib/sse-parse.ts';

const VIDEOS = 20_000;
const TARGET_VIDEOS_PER_SECOND = 2_000;
const WORKER_CONCURRENCY = 4; // the default; a crawl's steps run one after another anyway
const CRAWL_TIMEOUT_MS = 150_000;
/** BATCH_VIDEOS of core/crawl/fetchBatch.ts (not exported): what one step stores. */
const PRODUCTION_BATCH = 500;
const WHAT_IF_BATCH = 2_000;
const CHANNEL_ID = 'UCbenchCrawl20kVideos000'; // UC + 22
const CHANNEL_HANDLE = '@benchcrawl20k';

type SourceKind = 'youtube_api' | 'archive';

interface CrawlRun {
  source: SourceKind;
  label: string;
  /** Generating the source's data (the archive directory, the stand-in's channel), ms; not in the crawl time. */
  setupMs: number;
  videosExpected: number;
  videosStored: number;
  /** Distinct live (c:) search:video ids on the stream. */
  videosStreamed: number;
  finalEvent: string;
  /** POST /api/search sent → search:complete read. */
  endToEndSeconds: number;
  videosPerSecond: number;
  /**
   * Warming the sources up at process start (the archive's index), before the search: the worker's
   * ('afterimage ready' → 'source ready') and the API's, ms. Not in the crawl time: a started service has done it.
   */
  warmUpMs: { worker: number; api: number };
  /** POST /api/search round trip (resolving the channel through the sources, opening the crawl). */
  postMs: number;
  /** POST sent → first search:video on the stream. */
  firstVideoSeconds: number;
  /** First search:video → search:complete, and the rate within it. */
  streamingSeconds: number;
  streamingVideosPerSecond: number;
  /** crawls.started_at → finished_at, as the database saw it. */
  crawlSeconds: number;
  /** Steps (one search:progress each, i.e. one crawl_channel job that stored a batch), per source. */
  crawlJobs: number;
  jobsBySource: Record<string, number>;
  /** Time between consecutive steps' store transactions (their now()), ms. */
  stepIntervalMs: { median: number; p90: number; max: number } | null;
  worker: { baselineRssMiB: number; peakRssMiB: number; maxSampledRssMiB: number; cpuSeconds: number | null };
  /**
   * CPU during the crawl, seconds: the worker, PostgreSQL, this process (API + SSE reader + Data API
   * stand-in), the whole machine, and what other processes of the machine used meanwhile (a disturbance gauge).
   */
  cpuSeconds: { worker: number | null; postgres: number | null; harness: number; machine: number | null; other: number | null };
  /** RSS of this process (which runs the API) around POST /api/search: what resolving the channel through the sources kept. */
  harnessRssMiB: { beforePost: number; afterPost: number };
  sourceRequests: Record<string, number> | null;
  /** Jobs of other tasks waiting or running when the crawl completed (e.g. subtitle fetches the crawl enqueued), by task. */
  otherJobsQueued: Record<string, number>;
  workerWarnings: string[];
}

interface Replay {
  source: SourceKind;
  /** Building the source's view of the channel before the first page (the archive's index scan; channels.list), ms. */
  resolveMs: number;
  /** Every page of the channel, one after another, ms (no database). */
  listMs: number;
  pages: number;
  videos: number;
  /** Store transactions by batch size: upsertVideos + appendEvents (+ caption_info) + commit. */
  store: Array<{
    batch: number;
    transactions: number;
    totalMs: number;
    perTransactionMs: number;
    upsertMs: number;
    eventsMs: number;
    commitMs: number;
    perVideoUs: number;
    statementsMs: Record<string, number>;
  }>;
  /** Bytes of one search:video payload as stored (JSON text), on average. */
  eventBytes: number;
}

async function readStreamUntilDone(url: string, key: string, timeoutMs: number, onFirstVideo: () => void) {
  return new Promise<{ status: number; videos: Set<string>; final: string; finalData: string; progress: number }>((resolve, reject) => {
    const videos = new Set<string>();
    let progress = 0;
    let first = true;
    const request = get(url, { headers: { Accept: 'text/event-stream', 'X-API-Key': key }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        resolve({ status: response.statusCode ?? 0, videos, final: '', finalData: '', progress });
        return;
      }
      response.setEncoding('utf8');
      let final = '';
      let finalData = '';
      const feed = createSseParser((frame) => {
        if (frame.event === 'search:video' && frame.id?.startsWith('c:')) {
          if (first) {
            first = false;
            onFirstVideo();
          }
          videos.add(frame.id);
        } else if (frame.event === 'search:progress') progress++;
        else if (frame.event === 'search:complete' || frame.event === 'search:error') {
          final = frame.event;
          finalData = frame.data;
        }
      });
      response.on('data', feed);
      response.on('end', () => resolve({ status: 200, videos, final, finalData, progress }));
      response.on('error', reject);
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`the stream did not end within ${timeoutMs / 1000} s`)));
    request.on('error', reject);
  });
}

interface PreparedSource {
  kind: SourceKind;
  label: string;
  env: Record<string, string>;
  query: string;
  videosExpected: number;
  setupMs: number;
  requests(): Record<string, number> | null;
  cleanup(): Promise<void>;
}

async function prepareSource(kind: SourceKind, ctx: BenchContext, scratch: string): Promise<PreparedSource> {
  const started = performance.now();
  if (kind === 'youtube_api') {
    const server = await startYoutubeApiServer({ apiKey: 'bench-data-api-key' });
    server.createChannel({ channelId: CHANNEL_ID, handle: CHANNEL_HANDLE, title: 'Bench crawl 20k', videoCount: VIDEOS });
    ctx.progress(`Data API stand-in at ${server.url} with one channel of ${VIDEOS} videos`);
    const emptyArchive = join(scratch, 'no-archive');
    return {
      kind,
      label: 'YouTube Data API (local stand-in)',
      env: { YOUTUBE_API_KEY: server.apiKey, YOUTUBE_API_URL: server.url, ARCHIVE_DIR: emptyArchive },
      query: CHANNEL_HANDLE,
      videosExpected: VIDEOS,
      setupMs: performance.now() - started,
      requests: () => server.counts(),
      cleanup: () => server.close(),
    };
  }
  const fixture = await createArchiveFixture({ videos: VIDEOS, root: scratch, legacyChannel: false });
  ctx.progress(
    `archive directory of ${fixture.allVideoIds.length} videos (${VIDEOS} info.json + ${fixture.flatOnlyVideoIds.length} flat-playlist only) in ${round(fixture.elapsedMs / 1000, 1)} s`,
  );
  return {
    kind,
    label: 'yt-dlp archive directory (ARCHIVE_DIR)',
    env: { YOUTUBE_API_KEY: '', ARCHIVE_DIR: fixture.dir },
    query: fixture.handle,
    videosExpected: fixture.allVideoIds.length,
    setupMs: performance.now() - started,
    requests: () => null,
    cleanup: () => fixture.cleanup(),
  };
}

async function crawlOnce(
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
  const apiSources = configuredSources(config);
  const apiWarmUpStarted = performance.now();
  await warmUpSources(apiSources, ctx.log);
  const apiWarmUpMs = performance.now() - apiWarmUpStarted;
  ctx.progress(`${prepared.kind}: sources warmed up in ${Math.round(workerWarmUpMs)} ms (worker) and ${Math.round(apiWarmUpMs)} ms (API)`);
  const api = await startApi(
    {
      config,
      sql: apiSql,
      counterSql,
      tiers: cachedTiers(apiSql),
      log: ctx.log,
      version: packageVersion,
      startedAt: new Date(),
      hub,
      sources: apiSources,
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
  }
  return { run, channelId, config };
}

/** The source half of the crawl alone: a fresh source like the worker's, every page in turn. */
async function replaySource(kind: SourceKind, config: ReturnType<typeof loadConfig>, channelId: string) {
  const source: VideoSource = configuredSources(config).find((candidate) => candidate.name === kind)!;
  const resolveStarted = performance.now();
  const channel: ChannelRecord = (await source.resolveChannel({ kind: 'channelId', channelId })) ?? { channelId };
  const resolveMs = performance.now() - resolveStarted;
  const videos: VideoRecord[] = [];
  let cursor: string | undefined;
  let pages = 0;
  const listStarted = performance.now();
  do {
    const page = await source.listVideos(channel, cursor);
    videos.push(...page.videos);
    cursor = page.next;
    pages++;
  } while (cursor);
  return { channel, videos, resolveMs, listMs: performance.now() - listStarted, pages };
}

/**
 * `tx` with every query it runs timed under the first words of its text (queries run when awaited,
 * which the code under test does at once), so a production function's statements can be told apart.
 */
function timedQueries<T extends Queryable>(tx: T, into: Map<string, number>): T {
  return new Proxy(tx, {
    apply(target, thisArg, args: unknown[]) {
      const query = Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args) as PromiseLike<unknown> & {
        then: PromiseLike<unknown>['then'];
      };
      const strings = args[0];
      if (!Array.isArray(strings) || !('raw' in strings)) return query;
      const label = String(strings[0]).replace(/\s+/g, ' ').trim().split(' ').slice(0, 4).join(' ');
      const started = performance.now();
      const then = query.then.bind(query);
      // Counted once: postgres.js calls then() again itself (Query.catch inside transactions).
      let counted = false;
      // biome-ignore lint/suspicious/noThenProperty: wraps the query's own then() to time it
      query.then = ((resolve, reject) =>
        then((value) => {
          if (!counted) into.set(label, (into.get(label) ?? 0) + performance.now() - started);
          counted = true;
          return resolve ? resolve(value) : value;
        }, reject)) as typeof query.then;
      return query;
    },
  });
}

/** The store half alone: each batch in its own transaction, as a crawl step stores it (without the job hand-off). */
async function replayStore(sql: Sql, kind: SourceKind, channel: ChannelRecord, videos: VideoRecord[], batch: number) {
  await sql`truncate videos, video_sources, events cascade`;
  await upsertChannel(sql, channel);
  const stream = crawlStream(0);
  let upsertMs = 0;
  let eventsMs = 0;
  let commitMs = 0;
  let transactions = 0;
  const statements = new Map<string, number>();
  let payloadBytes = 0;
  let payloads = 0;
  const started = performance.now();
  for (let offset = 0; offset < videos.length; offset += batch) {
    const records = videos.slice(offset, offset + batch);
    let bodyDone = 0;
    await sql.begin(async (tx) => {
      const t0 = performance.now();
      const { changed } = await upsertVideos(timedQueries(tx, statements), kind, records);
      const t1 = performance.now();
      const events: SearchEvent[] = [searchEvents.progress({ stage: kind, percent: 50, videosInBatch: records.length })];
      for (const video of changed) events.push(searchEvents.video(video));
      const withCaptions = changed.filter(announcesCaptions);
      if (withCaptions.length) events.push(captionInfoOf(withCaptions));
      await appendEvents(timedQueries(tx, statements), stream, events);
      bodyDone = performance.now();
      upsertMs += t1 - t0;
      eventsMs += bodyDone - t1;
      if (offset === 0) {
        payloadBytes = changed.reduce((sum, video) => sum + JSON.stringify(video).length, 0);
        payloads = changed.length;
      }
    });
    commitMs += performance.now() - bodyDone;
    transactions++;
  }
  const totalMs = performance.now() - started;
  return {
    result: {
      batch,
      transactions,
      totalMs: round(totalMs, 0)!,
      perTransactionMs: round(totalMs / transactions, 1)!,
      upsertMs: round(upsertMs, 0)!,
      eventsMs: round(eventsMs, 0)!,
      commitMs: round(commitMs, 0)!,
      perVideoUs: round((totalMs * 1000) / videos.length, 0)!,
      statementsMs: Object.fromEntries([...statements].map(([label, ms]) => [label, Math.round(ms)])),
    },
    eventBytes: payloads ? Math.round(payloadBytes / payloads) : 0,
  };
}

async function replay(ctx: BenchContext, kind: SourceKind, config: ReturnType<typeof loadConfig>, channelId: string): Promise<Replay> {
  const listed = await replaySource(kind, config, channelId);
  ctx.progress(
    `${kind} replay: resolve ${Math.round(listed.resolveMs)} ms, ${listed.pages} pages in ${Math.round(listed.listMs)} ms (no database)`,
  );
  const db = await ctx.database();
  const sql = db.pool({ max: 2, role: 'bench-replay' });
  const store: Replay['store'] = [];
  let eventBytes = 0;
  for (const batch of [PRODUCTION_BATCH, WHAT_IF_BATCH]) {
    const { result, eventBytes: bytes } = await replayStore(sql, kind, listed.channel, listed.videos, batch);
    eventBytes ||= bytes;
    store.push(result);
    ctx.progress(
      `${kind} replay: store in batches of ${batch}: ${result.totalMs} ms (${result.perTransactionMs} ms a transaction: upsert ${result.upsertMs}, events ${result.eventsMs}, commit ${result.commitMs} ms in all)`,
    );
  }
  return {
    source: kind,
    resolveMs: round(listed.resolveMs, 0)!,
    listMs: round(listed.listMs, 0)!,
    pages: listed.pages,
    videos: listed.videos.length,
    store,
    eventBytes,
  };
}

export const benchmark: Benchmark = {
  name: 'channel-crawl',
  title: `Crawl of a ${VIDEOS.toLocaleString('en')}-video channel`,
  description:
    `A search (POST /api/search) of one channel with ${VIDEOS.toLocaleString('en')} videos, from the local YouTube Data API stand-in and, separately, from a generated yt-dlp archive directory (ARCHIVE_DIR), ` +
    "read over SSE until search:complete: end-to-end time, videos stored per second, time to the first video, crawl jobs, and the worker's peak memory. " +
    `The API runs in the harness process; the worker is \`afterimage worker\` in a child process (WORKER_CONCURRENCY=${WORKER_CONCURRENCY}). Each run has a fresh database; both processes have warmed their sources up (the archive's index) before the search, as a started service has, and the warm-up is reported apart. ` +
    `Target: ≥ ${TARGET_VIDEOS_PER_SECOND.toLocaleString('en')} videos/s stored. The source and store halves of a step are then replayed alone to show where the time goes.`,
  async run(ctx) {
    const problems: string[] = [];
    const runs: CrawlRun[] = [];
    const replays: Replay[] = [];
    const scratch = await mkdtemp(join(tmpdir(), 'afterimage-bench-crawl-'));
    try {
      for (const kind of ['youtube_api', 'archive'] as const) {
        const prepared = await prepareSource(kind, ctx, scratch);
        try {
          const { run, channelId, config } = await crawlOnce(ctx, prepared, problems);
          runs.push(run);
          replays.push(await replay(ctx, kind, config, channelId));
        } finally {
          await prepared.cleanup();
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    return {
      parameters: {
        videos: VIDEOS,
        targetVideosPerSecond: TARGET_VIDEOS_PER_SECOND,
        workerConcurrency: WORKER_CONCURRENCY,
        worker: '`node scripts/bin.mjs worker` (child process)',
        api: 'startApi in the harness process, configuredSources(loadConfig(...))',
        sources: {
          youtube_api: 'test/kit/servers/youtube-api-server.ts, 50 videos a page (playlistItems.list + videos.list)',
          archive:
            'test/kit/archive-fixture.ts, default options (8 formats an info.json, media every 4th, subtitles every 3rd), no legacy channel',
        },
        crawlBatch: PRODUCTION_BATCH,
        whatIfBatch: WHAT_IF_BATCH,
      },
      results: { runs, replays },
      targets: runs.map((run) =>
        target(`${run.label}: videos stored per second`, run.videosPerSecond, { atLeast: TARGET_VIDEOS_PER_SECOND }),
      ),
      ok: problems.length === 0,
      problems,
    };
  },
};
