/**
 * The per-request cost of authentication (the API key lookup) plus rate limiting (the usage counter upsert): two
 * do-nothing routes on the real request pipeline (createApi, in this process), one public, one behind a key,
 * under closed-loop load from autocannon in a child process. Their difference is the cost.
 */
import type { Server } from 'node:http';
import { z } from 'zod';
import { defineRoute } from '../../api/http/route.ts';
import { createApi } from '../../api/server.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { cachedApiKeys } from '../../core/accounts/cachedApiKeys.ts';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { type Benchmark, packageVersion } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { runLoad } from './lib/load.ts';
import { postmasterPid } from './lib/processes.ts';
import { round } from './lib/stats.ts';

const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = numberKnob('AUTH_RATE_LIMIT_SECONDS', 10);
const POOL_SIZE = 10; // DATABASE_POOL_SIZE's default

const ok = z.object({ ok: z.literal(true) });
const handler = async () => ({ ok: true as const });
const ROUTES = [
  defineRoute({ method: 'GET', path: '/bench/key', tag: 'Bench', summary: 'key + rate limit', auth: 'key', response: ok, handler }),
  defineRoute({
    method: 'GET',
    path: '/bench/public',
    tag: 'Bench',
    summary: 'public',
    auth: 'public',
    rateLimited: false,
    response: ok,
    handler,
  }),
];

export const benchmark: Benchmark = {
  name: 'auth-rate-limit',
  title: 'Authentication + rate limiting, per request',
  description:
    'Two do-nothing routes passed to createApi (in the harness process): `public-noop` and `key-noop`, which adds the API key lookup and the ' +
    `requestsPerMinute counter (committed asynchronously, as \`afterimage start\` wires it; the Pro tier's limit lifted, the counter still written). ` +
    `autocannon in a child process, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s; CPU from /proc, WAL from pg_current_wal_lsn().`,
  async run(ctx) {
    const db = await ctx.database();
    const sql = db.pool({ max: POOL_SIZE, role: 'api' });
    const counterSql = db.pool({ max: POOL_SIZE, role: 'api-counters', connection: { synchronous_commit: 'off' } });
    const user = await createUser(sql, { email: 'bench-main@example.org', tier: 'pro', isAdmin: false });
    const { key } = await createApiKey(sql, { userId: user.id });
    await updateTier(sql, 'pro', { limits: { requestsPerMinute: null } });
    // Request lines are serialised as in production (LOG_LEVEL=info) but not written out.
    const log = createLogger('info', {}, (line) => void (/"level":"(info|debug)"/.test(line) || process.stderr.write(line)));
    const config = loadConfig({ DATA_DIR: ctx.dataDir, LOG_LEVEL: 'info', DATABASE_POOL_SIZE: String(POOL_SIZE) });
    const hub = await createEventHub(sql, log);
    const tiers = cachedTiers(sql);
    const apiKeys = await cachedApiKeys(sql, { tiers });
    const services = await buildServices(config, { sql, log }, { sources: [] });
    const deps = {
      config,
      sql,
      counterSql,
      tiers,
      apiKeys,
      log,
      version: packageVersion,
      startedAt: new Date(),
      hub,
      openStreams: new Set<{ end(): void }>(),
    };
    const app = createApi({ ...deps, ...services }, ROUTES);
    await new Promise<void>((resolve) => app.listen({ port: 0, host: '127.0.0.1' }, () => resolve()));
    const server = app.server as Server;
    const port = (server.address() as { port: number }).port;
    const postmaster = await postmasterPid(sql);
    const wal = async () => (await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0]!.lsn;
    const problems: string[] = [];
    const variants: Record<string, Record<string, number | null>> = {};
    try {
      for (const [id, path, headers] of [
        ['public-noop', '/bench/public', {}],
        ['key-noop', '/bench/key', { 'X-API-Key': key }],
      ] as const) {
        const url = `http://127.0.0.1:${port}${path}`;
        const { report, cpu, marks } = await runLoad(
          { url, connections: CONNECTIONS, warmupSeconds: WARMUP_SECONDS, durationSeconds: DURATION_SECONDS, headers },
          { postmaster, mark: wal },
        );
        const [walRow] = await sql<
          { bytes: number }[]
        >`select pg_wal_lsn_diff(${marks.end as string}, ${marks.start as string})::float8 as bytes`;
        const n = Math.max(1, report.requests - report.non2xx);
        if (report.non2xx || report.errors || report.timeouts)
          problems.push(
            `${id}: ${report.non2xx} non-2xx (${JSON.stringify(report.statusCodes)}), ${report.errors} errors, ${report.timeouts} timeouts`,
          );
        variants[id] = {
          requestsPerSecond: Math.round(report.requestsPerSecond),
          p50Ms: round(report.latency.p50, 3),
          p99Ms: round(report.latency.p99, 3),
          serverCpuUs: round(cpu.selfUs / n, 1),
          postgresCpuUs: cpu.postgresUs === null ? null : round(cpu.postgresUs / n, 1),
          walBytes: round(walRow!.bytes / n, 0),
        };
        ctx.progress(`${id}: ${variants[id].requestsPerSecond} req/s, p50 ${variants[id].p50Ms} ms, p99 ${variants[id].p99Ms} ms`);
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await hub.close();
      await apiKeys.close();
    }
    const open = variants['public-noop'];
    const keyed = variants['key-noop'];
    const cost =
      open && keyed
        ? Object.fromEntries(
            Object.keys(keyed).map((figure) => [figure, round((keyed[figure] ?? Number.NaN) - (open[figure] ?? Number.NaN), 3)]),
          )
        : null;
    return {
      parameters: {
        connections: CONNECTIONS,
        warmupSeconds: WARMUP_SECONDS,
        durationSeconds: DURATION_SECONDS,
        databasePoolSize: POOL_SIZE,
      },
      results: { variants, authAndRateLimitCost: cost },
      targets: [],
      ok: problems.length === 0,
      problems,
    };
  },
};
