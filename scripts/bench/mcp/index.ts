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
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import type { Benchmark } from '../lib/harness.ts';
import { apiEnv, latencies, mcpOverhead, serverConstructionUs } from './latencies.ts';
import { seed } from './seed.ts';
import { sessions } from './sessions.ts';
import {
  CALLS_PER_SESSION,
  CHANNELS,
  CONCURRENT_CLIENTS,
  CONCURRENT_REQUESTS_PER_CLIENT,
  PAGE_SIZE,
  SEQUENTIAL_REQUESTS,
  SESSIONS,
  VIDEOS,
  VOCABULARY,
  WARMUP_REQUESTS,
} from './shape.ts';

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
