/**
 * The MCP endpoint (/mcp) against the REST routes that call the same core function: tools/call latency of
 * get_video_status_history and search_videos through the SDK's Client (stateless server: one POST a call),
 * one client and 8 at once; then 100 MCP clients connected at once to a fresh `afterimage api`, its RSS from /proc.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { fakeChannelId, fakeVideoId } from '../../test/kit/ids.ts';
import { random } from '../../test/kit/random.ts';
import { type Benchmark, packageVersion, sleep } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { drive } from './lib/load.ts';
import { sourcelessApiEnv, startService } from './lib/processes.ts';
import { distribution, round } from './lib/stats.ts';
import { cpuOf, memoryOf, memorySampler } from './lib/usage.ts';

const VIDEOS = 2_000;
const VOCABULARY = 300; // a title word matches about VIDEOS × 6 / VOCABULARY videos
const REQUESTS = numberKnob('MCP_BENCH_REQUESTS', 300);
const CLIENTS = 8;
const SESSIONS = numberKnob('MCP_BENCH_SESSIONS', 100);
const PAGE_SIZE = 20; // search_videos' default; /api/fts's is 50, so it is passed

const word = (i: number) => `w${i.toString(36)}x`;

async function connectClient(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'afterimage-bench', version: packageVersion });
  const headers = { Authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers } }));
  return client;
}

/** A tool call that must succeed. */
async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content).slice(0, 200)}`);
}

async function getJson(url: string, key: string): Promise<void> {
  const response = await fetch(url, { headers: { 'X-API-Key': key } });
  if (response.status !== 200) throw new Error(`GET ${new URL(url).pathname}: ${response.status} ${(await response.text()).slice(0, 200)}`);
  await response.arrayBuffer();
}

export const benchmark: Benchmark = {
  name: 'mcp',
  title: 'MCP endpoint: tool calls vs REST, concurrent sessions',
  description:
    `\`afterimage api\` as a child process over ${VIDEOS.toLocaleString('en')} videos. MCP tools/call (the SDK's Client + StreamableHTTPClientTransport) against ` +
    `the REST route calling the same core function, ${REQUESTS} calls with one client and with ${CLIENTS} at once; then ${SESSIONS} MCP clients connected at once ` +
    "to a fresh API process, three calls each, with the API's RSS. The Pro tier's per-minute limits are lifted; every call must succeed.",
  async run(ctx) {
    const db = await ctx.database();
    const sql = db.pool({ max: 4, role: 'bench-setup' });
    const rnd = random(42);
    const channels = Array.from({ length: 5 }, (_, i) => fakeChannelId(`mcp-bench-channel-${i}`));
    await sql`insert into channels (channel_id, title) select id, 'Bench channel ' || id from unnest(${channels}::text[]) as x(id)`;
    const videoIds = Array.from({ length: VIDEOS }, (_, i) => fakeVideoId(`mcp-bench-video-${i}`));
    const titles = videoIds.map(() => Array.from({ length: 6 }, () => word(Math.floor(rnd() * VOCABULARY))).join(' '));
    await sql`
      insert into videos (video_id, channel_id, title, duration_seconds, upload_date, status)
      select id, channel, title, 60 + (ord * 37) % 3600, date '2016-01-01' + (ord % 3000)::int, 'live'
      from unnest(${videoIds}::text[], ${videoIds.map((_, i) => channels[i % channels.length]!)}::text[], ${titles}::text[]) with ordinality as x(id, channel, title, ord)`;
    await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, ftsQueriesPerMinute: null } });
    const keys: string[] = [];
    for (let i = 0; i < Math.max(SESSIONS, CLIENTS); i++) {
      const user = await createUser(sql, { email: `mcp-bench-${i}@example.org`, tier: 'pro', isAdmin: false });
      keys.push((await createApiKey(sql, { userId: user.id })).key);
    }
    const env = sourcelessApiEnv(ctx.dataDir, db.url, 'mcp');
    const video = (i: number) => videoIds[(i * 7) % VIDEOS]!;
    const query = (i: number) => word((i % 50) * 5);
    const problems: string[] = [];

    let api = await startService('api', env);
    const clients = await Promise.all(keys.slice(0, CLIENTS).map((key) => connectClient(api.url!, key)));
    const operations = {
      'mcp-status-history': (c: number, i: number) => callTool(clients[c]!, 'get_video_status_history', { videoId: video(i) }),
      'rest-status-history': (c: number, i: number) => getJson(`${api.url}/api/videos/${video(i)}/status-history`, keys[c]!),
      'mcp-search': (c: number, i: number) => callTool(clients[c]!, 'search_videos', { q: query(i), pageSize: PAGE_SIZE }),
      'rest-search': (c: number, i: number) => getJson(`${api.url}/api/fts?q=${query(i)}&pageSize=${PAGE_SIZE}`, keys[c]!),
    };
    const operationResults: Record<string, unknown> = {};
    try {
      for (const [id, call] of Object.entries(operations)) {
        await drive((i) => call(i % CLIENTS, i), { clients: CLIENTS, seconds: 60, count: 40 });
        const measure = async (clientCount: number) => {
          const cpuBefore = cpuOf(api.pid)!;
          const sample = await drive((i) => call(i % clientCount, i), { clients: clientCount, seconds: 300, count: REQUESTS });
          if (sample.errors) problems.push(`${id}: ${sample.errors} failed, first: ${[...sample.errorMessages][0]}`);
          const cpuUs = round((cpuOf(api.pid)! - cpuBefore) / sample.latencies.length, 0);
          return { latencyMs: distribution(sample.latencies, 2), apiCpuUsPerCall: cpuUs };
        };
        const sequential = await measure(1);
        const concurrent = await measure(CLIENTS);
        operationResults[id] = { sequential, concurrent };
        ctx.progress(`${id}: p50 ${sequential.latencyMs.p50} ms alone, ${concurrent.latencyMs.p50} ms with ${CLIENTS} clients`);
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await api.stop();
    }

    api = await startService('api', env);
    const sampler = memorySampler(api.pid, 50);
    try {
      await sleep(1_000);
      const idleRssMiB = round(memoryOf(api.pid)!.rssMiB, 1);
      const connected = await Promise.allSettled(keys.slice(0, SESSIONS).map((key) => connectClient(api.url!, key)));
      const sessions = connected.flatMap((settled) => (settled.status === 'fulfilled' ? [settled.value] : []));
      const calls = await Promise.allSettled(
        sessions.flatMap((client, c) => [
          callTool(client, 'get_video', { videoId: video(c) }),
          callTool(client, 'search_videos', { q: query(c), pageSize: PAGE_SIZE }),
          callTool(client, 'get_video', { videoId: video(c + 1) }),
        ]),
      );
      const failed = calls.filter((call) => call.status === 'rejected').length;
      if (sessions.length < SESSIONS || failed)
        problems.push(`sessions: ${sessions.length} of ${SESSIONS} connected, ${failed} calls failed`);
      const peakRssMiB = round(sampler.maxSince(), 1);
      await Promise.all(sessions.map((client) => client.close()));
      ctx.progress(`${sessions.length} sessions, ${calls.length - failed} calls ok; RSS ${idleRssMiB} → ${peakRssMiB} MiB`);
      const sessionResults = { connected: sessions.length, callsOk: calls.length - failed, rssMiB: { idle: idleRssMiB, peak: peakRssMiB } };
      return {
        parameters: { videos: VIDEOS, requests: REQUESTS, clients: CLIENTS, sessions: SESSIONS, searchPageSize: PAGE_SIZE },
        results: { operations: operationResults, sessions: sessionResults },
        targets: [],
        ok: problems.length === 0,
        problems,
      };
    } finally {
      sampler.stop();
      await api.stop();
    }
  },
};
