/**
 * The per-request cost of authentication (API key lookup) plus rate limiting (the usage counter
 * upsert), over HTTP against the real server, and query by query inside the process.
 *
 * The API runs in this process (startApi for the real routes, createApi with two do-nothing routes
 * for the isolated cost); the load generator (autocannon) runs in a child process, so client and
 * server do not share an event loop. Both share the machine with PostgreSQL.
 */
import type { Benchmark } from '../lib/harness.ts';
import { round } from '../lib/stats.ts';
import { run, type VariantResult } from './measure.ts';
import {
  CONNECTIONS,
  DISTINCT_USERS,
  DURATION_SECONDS,
  POOL_SIZE,
  QUERY_CONCURRENCY,
  QUERY_ROUNDS,
  QUERY_SECONDS,
  WARMUP_SECONDS,
} from './shape.ts';

export const benchmark: Benchmark = {
  name: 'auth-rate-limit',
  title: 'Authentication + rate limiting, per request',
  description:
    'The real API (startApi, in the harness process) under closed-loop load from autocannon in a child process. ' +
    '`public-noop` and `key-noop` are two do-nothing routes passed to createApi: the second adds the API key lookup and the requestsPerMinute counter, ' +
    "so their difference is the per-request cost of authentication + rate limiting. The Pro tier's requestsPerMinute is unlimited for the run " +
    '(the counter is still written), and every variant must answer only 2xx. CPU is measured from /proc for the server process, the load client and PostgreSQL.',
  async run(ctx) {
    const { results, queryResults, problems, database, diskFlush } = await run(ctx);
    return {
      parameters: {
        connections: CONNECTIONS,
        warmupSeconds: WARMUP_SECONDS,
        durationSeconds: DURATION_SECONDS,
        pipelining: 1,
        databasePoolSize: POOL_SIZE,
        tierCacheTtlMs: 5_000,
        logLevel: 'info (serialised, not written)',
        distinctUsers: DISTINCT_USERS,
        queryConcurrency: QUERY_CONCURRENCY,
        queryRounds: QUERY_ROUNDS,
        queryRoundSeconds: QUERY_SECONDS,
        loadGenerator: 'autocannon (child process), latencies recorded per response',
        database: `${database.server} PostgreSQL ${database.serverVersion}`,
      },
      results: { variants: results, authAndRateLimitCost: authCost(results), queries: queryResults, diskFlush },
      targets: [],
      ok: problems.length === 0,
      problems,
    };
  },
};

/** What authentication + rate limiting add to a request: key-noop − public-noop, per figure. */
export function authCost(variants: VariantResult[]) {
  const key = variants.find((variant) => variant.id === 'key-noop');
  const open = variants.find((variant) => variant.id === 'public-noop');
  if (!key || !open) return null;
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : round(a - b, 1));
  return {
    requestsPerSecond: key.requestsPerSecond - open.requestsPerSecond,
    p50Ms: round(key.latencyMs.p50 - open.latencyMs.p50, 3),
    p99Ms: round(key.latencyMs.p99 - open.latencyMs.p99, 3),
    serverUs: diff(key.cpuUsPerRequest.server, open.cpuUsPerRequest.server),
    postgresUs: diff(key.cpuUsPerRequest.postgres, open.cpuUsPerRequest.postgres),
    machineUs: diff(key.cpuUsPerRequest.machine, open.cpuUsPerRequest.machine),
    walBytes: diff(key.walBytesPerRequest, open.walBytesPerRequest),
    /** 1/throughput: the machine time one request costs at saturation */
    wallUsPerRequest: round(1e6 / key.requestsPerSecond - 1e6 / open.requestsPerSecond, 1),
  };
}
