/**
 * The MCP endpoint (/mcp, api/mcp/) against the REST routes that do the same work: tools/call
 * latency of get_video, get_video_status_history and search_videos through the SDK's Client and
 * StreamableHTTPClientTransport (the server is stateless: one POST per call, a fresh McpServer and
 * transport per POST), sequential and with several concurrent clients; then many MCP client sessions
 * connected at once to one API process, with its memory read from /proc.
 *
 * The API runs as a child process (`node scripts/bin.mjs api`), the clients in the harness process,
 * so the API's RSS and CPU are its own. Each client has its own user and key, so no two clients
 * share a usage counter row.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import type { Sql } from '../../core/db/database.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import type { McpContext } from '../../api/mcp/context.ts';
import { createMcpServer } from '../../api/mcp/server.ts';
import { fakeChannelId, fakeVideoId } from '../../test/kit/ids.ts';
import { random } from '../../test/kit/random.ts';
import { type BenchContext, type Benchmark, packageVersion, sleep } from './lib/harness.ts';
import { type ServiceProcess, startService } from './lib/processes.ts';
import { percentile, round } from './lib/stats.ts';
import { cpuOf, memoryOf, memorySampler } from './lib/usage.ts';

const VIDEOS = 2_000;
const CHANNELS = 5;
const VOCABULARY = 300; // words per title drawn from it: a query word matches about VIDEOS × 6 / VOCABULARY videos
const SEQUENTIAL_REQUESTS = 300;
const CONCURRENT_CLIENTS = 8;
const CONCURRENT_REQUESTS_PER_CLIENT = 60;
const WARMUP_REQUESTS = 40;
const SESSIONS = 100;
const CALLS_PER_SESSION = 3;
const PAGE_SIZE = 20; // search_videos' default; /api/fts defaults to 50, so it is passed explicitly

interface Seeded {
  videoIds: string[];
  words: string[];
}

const word = (i: number) => `w${i.toString(36)}x`;

/** CHANNELS channels and VIDEOS live videos, titles of 6 words from a VOCABULARY-word list, in plain SQL. */
async function seed(sql: Sql): Promise<Seeded> {
  const rnd = random(42);
  const channelIds = Array.from({ length: CHANNELS }, (_, i) => fakeChannelId(`mcp-bench-channel-${i}`));
  await sql`insert into channels (channel_id, title) select id, 'Bench channel ' || id from unnest(${channelIds}::text[]) as x(id)`;
  const videoIds = Array.from({ length: VIDEOS }, (_, i) => fakeVideoId(`mcp-bench-video-${i}`));
  const titles = videoIds.map(() => Array.from({ length: 6 }, () => word(Math.floor(rnd() * VOCABULARY))).join(' '));
  await sql`
    insert into videos (video_id, channel_id, title, description, duration_seconds, view_count, upload_date, status)
    select id, channel, title, 'Description of ' || title, 60 + (ord * 37) % 3600, (ord * 7919) % 1000000, date '2016-01-01' + (ord % 3000)::int, 'live'
    from unnest(${videoIds}::text[], ${videoIds.map((_, i) => channelIds[i % CHANNELS]!)}::text[], ${titles}::text[]) with ordinality as x(id, channel, title, ord)`;
  return { videoIds, words: Array.from({ length: 50 }, (_, i) => word(i * 5)) };
}

type Call = (client: Client | undefined, key: string, i: number) => Promise<string | undefined>;

interface Operation {
  id: string;
  label: string;
  kind: 'mcp' | 'rest';
  call: Call;
}

interface Measured {
  requests: number;
  failures: number;
  firstFailure: string | null;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  serverCpuUsPerRequest: number | null;
}

interface OperationResult {
  id: string;
  label: string;
  kind: 'mcp' | 'rest';
  sequential: Measured;
  concurrent: Measured;
}

async function connectClient(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'afterimage-bench', version: packageVersion });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** A tool call that must succeed: the problem, or undefined. */
async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  check: (data: any) => boolean,
): Promise<string | undefined> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) return `${name}: ${JSON.stringify(result.content).slice(0, 200)}`;
  return check(result.structuredContent) ? undefined : `${name}: unexpected ${JSON.stringify(result.structuredContent).slice(0, 200)}`;
}

async function getJson(url: string, key: string, check: (data: any) => boolean): Promise<string | undefined> {
  const response = await fetch(url, { headers: { 'X-API-Key': key } });
  const body = (await response.json()) as { data?: unknown };
  if (response.status !== 200)
    return `GET ${url.replace(/^https?:\/\/[^/]+/, '')}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`;
  return check(body.data) ? undefined : `GET ${url}: unexpected ${JSON.stringify(body).slice(0, 200)}`;
}

function operations(baseUrl: string, seeded: Seeded): Operation[] {
  const video = (i: number) => seeded.videoIds[(i * 7) % seeded.videoIds.length]!;
  const query = (i: number) => seeded.words[i % seeded.words.length]!;
  const searched = (data: any) => Array.isArray(data?.videos) && data.videos.length > 0;
  return [
    {
      id: 'mcp-get_video',
      label: 'MCP tools/call get_video',
      kind: 'mcp',
      call: (client, _, i) => callTool(client!, 'get_video', { videoId: video(i) }, (data) => data?.videoId === video(i)),
    },
    {
      id: 'mcp-get_video_status_history',
      label: 'MCP tools/call get_video_status_history',
      kind: 'mcp',
      call: (client, _, i) => callTool(client!, 'get_video_status_history', { videoId: video(i) }, (data) => data?.videoId === video(i)),
    },
    {
      id: 'rest-status-history',
      label: 'REST GET /api/videos/:id/status-history',
      kind: 'rest',
      call: (_, key, i) => getJson(`${baseUrl}/api/videos/${video(i)}/status-history`, key, (data) => data?.videoId === video(i)),
    },
    {
      id: 'mcp-search_videos',
      label: `MCP tools/call search_videos (pageSize ${PAGE_SIZE})`,
      kind: 'mcp',
      call: (client, _, i) => callTool(client!, 'search_videos', { q: query(i), pageSize: PAGE_SIZE }, searched),
    },
    {
      id: 'rest-fts',
      label: `REST GET /api/fts?q=…&pageSize=${PAGE_SIZE}`,
      kind: 'rest',
      call: (_, key, i) => getJson(`${baseUrl}/api/fts?q=${encodeURIComponent(query(i))}&pageSize=${PAGE_SIZE}`, key, searched),
    },
  ];
}

/** `perClient` calls by each of `clients.length` clients at once (each sequential); latencies in ms. */
async function measure(
  api: ServiceProcess,
  op: Operation,
  clients: Array<{ client: Client | undefined; key: string }>,
  perClient: number,
): Promise<Measured> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const cpuBefore = cpuOf(api.pid);
  const started = performance.now();
  await Promise.all(
    clients.map(async ({ client, key }, c) => {
      for (let n = 0; n < perClient; n++) {
        const i = c * perClient + n;
        const t = performance.now();
        let problem: string | undefined;
        try {
          problem = await op.call(client, key, i);
        } catch (error) {
          problem = `${op.id}: ${(error as Error).message}`;
        }
        latencies.push(performance.now() - t);
        if (problem) {
          failures += 1;
          firstFailure ??= problem;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuOf(api.pid);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    failures,
    firstFailure,
    seconds: round(seconds, 2)!,
    requestsPerSecond: round(latencies.length / seconds, 0)!,
    p50Ms: round(percentile(latencies, 50), 2)!,
    p99Ms: round(percentile(latencies, 99), 2)!,
    meanMs: round(latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length, 2)!,
    serverCpuUsPerRequest: cpuBefore === undefined || cpuAfter === undefined ? null : round((cpuAfter - cpuBefore) / latencies.length, 0),
  };
}

/**
 * What building the per-request McpServer costs on its own (api/mcp/handler.ts does it for every
 * POST): registering every tool, resource and prompt. In process, with a stub context (nothing runs).
 */
function serverConstructionUs(): number {
  const ctx = { deps: { version: packageVersion }, caller: {}, log: { child: () => ({}) }, requestId: 'bench' } as unknown as McpContext;
  for (let i = 0; i < 50; i++) void createMcpServer(ctx).close();
  const n = 500;
  const started = performance.now();
  for (let i = 0; i < n; i++) void createMcpServer(ctx).close();
  return round(((performance.now() - started) * 1000) / n, 0)!;
}

function apiEnv(ctx: BenchContext, url: string): Record<string, string> {
  return {
    DATABASE_URL: url,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: ctx.dataDir,
    ARCHIVE_DIR: join(ctx.dataDir, 'mcp-no-archive'),
    YOUTUBE_API_KEY: '',
    WAYBACK_ENABLED: 'false',
  };
}

async function latencies(
  ctx: BenchContext,
  env: Record<string, string>,
  seeded: Seeded,
  keys: string[],
  problems: string[],
): Promise<OperationResult[]> {
  const api = await startService('api', env);
  const results: OperationResult[] = [];
  const clients: Client[] = [];
  try {
    const baseUrl = api.url!;
    ctx.progress(`latency: API pid ${api.pid} at ${baseUrl}`);
    for (let c = 0; c < CONCURRENT_CLIENTS; c++) clients.push(await connectClient(baseUrl, keys[c]!));
    const sequential = [{ client: clients[0], key: keys[0]! }];
    const concurrent = clients.map((client, c) => ({ client, key: keys[c]! }));
    for (const op of operations(baseUrl, seeded)) {
      await measure(api, op, concurrent, Math.ceil(WARMUP_REQUESTS / CONCURRENT_CLIENTS));
      const seq = await measure(api, op, sequential, SEQUENTIAL_REQUESTS);
      const conc = await measure(api, op, concurrent, CONCURRENT_REQUESTS_PER_CLIENT);
      for (const [mode, m] of [
        ['sequential', seq],
        ['concurrent', conc],
      ] as const) {
        if (m.failures > 0) problems.push(`${op.id} ${mode}: ${m.failures} of ${m.requests} failed, first: ${m.firstFailure}`);
      }
      ctx.progress(
        `${op.id}: sequential p50 ${seq.p50Ms} ms p99 ${seq.p99Ms} ms; ${CONCURRENT_CLIENTS} clients p50 ${conc.p50Ms} ms p99 ${conc.p99Ms} ms, ${conc.requestsPerSecond} req/s; failures ${seq.failures + conc.failures}`,
      );
      results.push({ id: op.id, label: op.label, kind: op.kind, sequential: seq, concurrent: conc });
    }
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await api.stop();
  }
  return results;
}

interface SessionsResult {
  sessions: number;
  callsPerSession: number;
  connected: number;
  callsOk: number;
  callsFailed: number;
  firstFailure: string | null;
  connectMs: { p50: number; p99: number; allConnectedMs: number };
  callMs: { p50: number; p99: number; allDoneMs: number };
  rssMiB: { idle: number; beforeSessions: number; sampledPeak: number; vmHwm: number; afterClose: number };
  serverCpuMs: number | null;
}

/** SESSIONS clients connected at once to a fresh API process, each making CALLS_PER_SESSION calls at once with the others. */
async function sessions(
  ctx: BenchContext,
  env: Record<string, string>,
  seeded: Seeded,
  keys: string[],
  problems: string[],
): Promise<SessionsResult> {
  const api = await startService('api', env);
  const sampler = memorySampler(api.pid, 50);
  const clients: Client[] = [];
  try {
    const baseUrl = api.url!;
    await sleep(1_000);
    const idle = memoryOf(api.pid)!.rssMiB;
    // One client first, so that what loads on first use (the SDK's server side, zod schemas) is not counted as per-session cost.
    const warm = await connectClient(baseUrl, keys[0]!);
    const warmProblem =
      (await callTool(warm, 'get_video', { videoId: seeded.videoIds[0]! }, Boolean)) ??
      (await callTool(warm, 'search_videos', { q: seeded.words[0]!, pageSize: PAGE_SIZE }, Boolean));
    if (warmProblem) problems.push(`sessions warm-up: ${warmProblem}`);
    await warm.close();
    await sleep(500);
    const beforeSessions = memoryOf(api.pid)!.rssMiB;
    const since = performance.now();
    const cpuBefore = cpuOf(api.pid);
    ctx.progress(
      `sessions: API pid ${api.pid}, RSS idle ${round(idle, 1)} MiB, after one client ${round(beforeSessions, 1)} MiB; connecting ${SESSIONS} clients at once`,
    );

    const connectMs: number[] = [];
    const connectStarted = performance.now();
    const settled = await Promise.allSettled(
      keys.slice(0, SESSIONS).map(async (key) => {
        const t = performance.now();
        const client = await connectClient(baseUrl, key);
        connectMs.push(performance.now() - t);
        clients.push(client);
        return client;
      }),
    );
    const allConnectedMs = performance.now() - connectStarted;
    const connected = settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<Client>).value);
    const refused = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult | undefined;
    if (refused)
      problems.push(`sessions: ${SESSIONS - connected.length} clients failed to connect, first: ${(refused.reason as Error)?.message}`);

    const callMs: number[] = [];
    let callsFailed = 0;
    let firstFailure: string | null = null;
    const callsStarted = performance.now();
    await Promise.all(
      connected.map(async (client, c) => {
        for (let n = 0; n < CALLS_PER_SESSION; n++) {
          const i = c * CALLS_PER_SESSION + n;
          const videoId = seeded.videoIds[(i * 13) % seeded.videoIds.length]!;
          const t = performance.now();
          let problem: string | undefined;
          try {
            problem =
              n === 1
                ? await callTool(client, 'search_videos', { q: seeded.words[i % seeded.words.length]!, pageSize: PAGE_SIZE }, (data) =>
                    Array.isArray(data?.videos),
                  )
                : await callTool(client, 'get_video', { videoId }, (data) => data?.videoId === videoId);
          } catch (error) {
            problem = (error as Error).message;
          }
          callMs.push(performance.now() - t);
          if (problem) {
            callsFailed += 1;
            firstFailure ??= problem;
          }
        }
      }),
    );
    const allDoneMs = performance.now() - callsStarted;
    const cpuAfter = cpuOf(api.pid);
    const vmHwm = memoryOf(api.pid)!.peakMiB;
    const sampledPeak = sampler.maxSince(since);
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    clients.length = 0;
    await sleep(1_000);
    const afterClose = memoryOf(api.pid)!.rssMiB;
    if (callsFailed > 0) problems.push(`sessions: ${callsFailed} of ${callMs.length} calls failed, first: ${firstFailure}`);
    connectMs.sort((a, b) => a - b);
    callMs.sort((a, b) => a - b);
    return {
      sessions: SESSIONS,
      callsPerSession: CALLS_PER_SESSION,
      connected: connected.length,
      callsOk: callMs.length - callsFailed,
      callsFailed,
      firstFailure,
      connectMs: {
        p50: round(percentile(connectMs, 50), 1)!,
        p99: round(percentile(connectMs, 99), 1)!,
        allConnectedMs: round(allConnectedMs, 0)!,
      },
      callMs: { p50: round(percentile(callMs, 50), 1)!, p99: round(percentile(callMs, 99), 1)!, allDoneMs: round(allDoneMs, 0)! },
      rssMiB: {
        idle: round(idle, 1)!,
        beforeSessions: round(beforeSessions, 1)!,
        sampledPeak: round(sampledPeak, 1)!,
        vmHwm: round(vmHwm, 1)!,
        afterClose: round(afterClose, 1)!,
      },
      serverCpuMs: cpuBefore === undefined || cpuAfter === undefined ? null : round((cpuAfter - cpuBefore) / 1000, 0),
    };
  } finally {
    sampler.stop();
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await api.stop();
  }
}

/** MCP against REST for the same work: the difference of each figure (MCP − REST), ms and µs. */
function mcpOverhead(ops: OperationResult[]) {
  const byId = (id: string) => ops.find((op) => op.id === id);
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : round(a - b, 2));
  return (
    [
      ['mcp-get_video_status_history', 'rest-status-history', 'Δ MCP overhead, status history (same core function)'],
      ['mcp-search_videos', 'rest-fts', 'Δ MCP overhead, search (same core function)'],
      ['mcp-get_video', 'rest-status-history', 'Δ get_video vs REST status-history (different queries)'],
    ] as const
  ).flatMap(([mcpId, restId, pair]) => {
    const mcp = byId(mcpId);
    const rest = byId(restId);
    if (!mcp || !rest) return [];
    return [
      {
        pair,
        sequentialP50Ms: diff(mcp.sequential.p50Ms, rest.sequential.p50Ms),
        sequentialP99Ms: diff(mcp.sequential.p99Ms, rest.sequential.p99Ms),
        concurrentP50Ms: diff(mcp.concurrent.p50Ms, rest.concurrent.p50Ms),
        concurrentP99Ms: diff(mcp.concurrent.p99Ms, rest.concurrent.p99Ms),
        serverCpuUs: diff(mcp.sequential.serverCpuUsPerRequest, rest.sequential.serverCpuUsPerRequest),
      },
    ];
  });
}

export const benchmark: Benchmark = {
  name: 'mcp',
  title: 'MCP endpoint: tool calls vs REST, concurrent sessions',
  description:
    `The real API (\`afterimage api\` as a child process) on a fresh database seeded with ${VIDEOS.toLocaleString('en')} videos in ${CHANNELS} channels. ` +
    "MCP tools/call (the SDK's Client + StreamableHTTPClientTransport; the server is stateless, one POST per call) against the REST route doing the same work, " +
    `sequential and with ${CONCURRENT_CLIENTS} concurrent clients; then ${SESSIONS} MCP clients connected at once to a fresh API process, each making ${CALLS_PER_SESSION} calls, with the API's RSS from /proc. ` +
    "The Pro tier's requestsPerMinute and ftsQueriesPerMinute are unlimited for the run; every call must succeed. No target is set: the figures are reported.",
  async run(ctx) {
    const db = await ctx.database();
    const sql = db.pool({ max: 4, role: 'bench-setup' });
    const started = performance.now();
    const seeded = await seed(sql);
    await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, ftsQueriesPerMinute: null } });
    const keys: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const user = await createUser(sql, { email: `mcp-bench-${i}@example.org`, tier: 'pro', isAdmin: false });
      keys.push((await createApiKey(sql, { userId: user.id })).key);
    }
    ctx.progress(
      `${VIDEOS} videos in ${CHANNELS} channels, ${SESSIONS} Pro users with keys in ${Math.round(performance.now() - started)} ms`,
    );
    const env = apiEnv(ctx, db.url);
    const problems: string[] = [];
    const ops = await latencies(ctx, env, seeded, keys, problems);
    const session = await sessions(ctx, env, seeded, keys, problems);
    ctx.progress(
      `sessions: ${session.connected} connected, ${session.callsOk} calls ok, ${session.callsFailed} failed; RSS ${session.rssMiB.beforeSessions} → VmHWM ${session.rssMiB.vmHwm} MiB`,
    );
    const constructionUs = serverConstructionUs();
    ctx.progress(`createMcpServer alone (in process): ${constructionUs} µs`);
    return {
      parameters: {
        videos: VIDEOS,
        channels: CHANNELS,
        titleVocabulary: VOCABULARY,
        sequentialRequests: SEQUENTIAL_REQUESTS,
        concurrentClients: CONCURRENT_CLIENTS,
        concurrentRequestsPerClient: CONCURRENT_REQUESTS_PER_CLIENT,
        warmupRequests: WARMUP_REQUESTS,
        sessions: SESSIONS,
        callsPerSession: CALLS_PER_SESSION,
        searchPageSize: PAGE_SIZE,
        proLimits: { requestsPerMinute: null, ftsQueriesPerMinute: null },
        api: 'node scripts/bin.mjs api (child process), LOG_LEVEL=info, default pool size',
        database: `${db.server} PostgreSQL ${db.serverVersion}`,
      },
      results: { operations: ops, mcpOverhead: mcpOverhead(ops), sessions: session, createMcpServerUs: constructionUs },
      targets: [],
      ok: problems.length === 0,
      problems,
    };
  },
};
