/**
 * The per-request cost of authentication (API key lookup) plus rate limiting (the usage counter
 * upsert), over HTTP against the real server, and query by query inside the process.
 *
 * The API runs in this process (startApi for the real routes, createApi with two do-nothing routes
 * for the isolated cost); the load generator (autocannon) runs in a child process, so client and
 * server do not share an event loop. Both share the machine with PostgreSQL.
 */
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createApi, startApi } from '../../api/server.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { defineRoute } from '../../api/http/route.ts';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { findApiKey } from '../../core/accounts/findApiKey.ts';
import { loadConfig } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { hashApiKey } from '../../core/keys.ts';
import { createLogger } from '../../core/log.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { consumeQuota, readQuotas } from '../../core/usage/consumeQuota.ts';
import { type BenchContext, type Benchmark, packageVersion, sleep } from './lib/harness.ts';
import { drive, type LoadOutcome, runLoad } from './lib/load.ts';
import { postmasterPid } from './lib/processes.ts';
import { median, percentile, round } from './lib/stats.ts';
import { cpuDelta, cpuSnapshot } from './lib/usage.ts';

const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 10;
const POOL_SIZE = 10; // DATABASE_POOL_SIZE's default: what `npm start` uses
const DISTINCT_USERS = CONNECTIONS;
const QUERY_CONCURRENCY = POOL_SIZE;
const QUERY_ROUNDS = 3;
const QUERY_WARMUP_SECONDS = 0.2;
const QUERY_SECONDS = 1;

const ok = z.object({ ok: z.literal(true) });
/** Authentication with a key and the requestsPerMinute counter, then nothing. */
const keyRoute = defineRoute({
  method: 'GET',
  path: '/bench/key',
  tag: 'Bench',
  summary: 'API key + rate limit, no work',
  auth: 'key',
  response: ok,
  async handler() {
    return { ok: true as const };
  },
});
/** The same pipeline without a key lookup or a counter: the baseline. */
const publicRoute = defineRoute({
  method: 'GET',
  path: '/bench/public',
  tag: 'Bench',
  summary: 'public, not rate limited, no work',
  auth: 'public',
  rateLimited: false,
  response: ok,
  async handler() {
    return { ok: true as const };
  },
});

interface Listening {
  port: number;
  close(): Promise<void>;
}

/** createApi(deps, routes) listening like startApi does (startApi itself always serves allRoutes). */
async function listen(app: ReturnType<typeof createApi>): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    app.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
    app.server.once('error', reject);
  });
  const server = app.server as Server;
  server.keepAliveTimeout = 5_000;
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Variant {
  id: string;
  label: string;
  port: () => number;
  path: string;
  /** none, one key on every connection, or one key per connection */
  keys: 'none' | 'one' | 'per-connection';
  expect: (body: any) => string | undefined;
}

interface VariantResult {
  id: string;
  label: string;
  path: string;
  keys: Variant['keys'];
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: LoadOutcome['report']['latency'];
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU per 2xx response, µs: the server process (Node), the load client, PostgreSQL, and the whole machine */
  cpuUsPerRequest: { server: number; client: number; postgres: number | null; machine: number | null };
  machineUtilisation: number | null;
  /** Cores busy with anything but server, client and PostgreSQL during the measurement (other work on the machine). */
  backgroundCores: number | null;
  walBytesPerRequest: number | null;
}

interface QueryResult {
  id: string;
  label: string;
  concurrency: number;
  operations: number;
  /** median of the rounds */
  operationsPerSecond: number;
  operationsPerSecondByRound: number[];
  latencyMs: { mean: number; p50: number; p99: number };
  cpuUsPerOperation: { node: number; postgres: number | null; machine: number | null };
  walBytesPerOperation: number | null;
  backgroundCores: number | null;
}

/** Cores that other processes of the machine kept busy meanwhile (tests, builds, ...): a disturbance gauge. */
function background(machineUs: number | null, seconds: number, ...ours: Array<number | null>): number | null {
  if (machineUs === null || ours.some((us) => us === null)) return null;
  return round(Math.max(0, machineUs - ours.reduce<number>((sum, us) => sum + us!, 0)) / (seconds * 1e6), 2);
}

/**
 * How fast this disk makes a write durable: 8 kB written and fdatasync'd in a loop for `seconds`, in
 * DATA_DIR (where the embedded cluster's WAL is). Every synchronous commit waits for one such flush.
 */
function diskFlush(dataDir: string, seconds = 1): { flushesPerSecond: number; meanMs: number } {
  const file = join(dataDir, `flush-probe-${process.pid}`);
  const fd = openSync(file, 'w');
  const page = Buffer.alloc(8192, 1);
  let flushes = 0;
  const started = performance.now();
  try {
    while (performance.now() - started < seconds * 1000) {
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      flushes += 1;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const elapsed = (performance.now() - started) / 1000;
  return { flushesPerSecond: round(flushes / elapsed, 0)!, meanMs: round((elapsed * 1000) / flushes, 3)! };
}

async function walPosition(sql: Sql): Promise<string> {
  const [row] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
  return row!.lsn;
}

async function walBytes(sql: Sql, start: unknown, end: unknown): Promise<number | null> {
  if (typeof start !== 'string' || typeof end !== 'string') return null;
  const [row] = await sql<{ bytes: number }[]>`select pg_wal_lsn_diff(${end}::pg_lsn, ${start}::pg_lsn)::float8 as bytes`;
  return row!.bytes;
}

interface QuerySamples {
  latencies: number[];
  rates: number[];
  seconds: number;
  selfUs: number;
  postgresUs: number | null;
  machineUs: number | null;
  walBytes: number | null;
}

/**
 * Each query for QUERY_ROUNDS rounds of QUERY_SECONDS, the queries taking turns round by round,
 * so that a burst of other work on a shared machine spreads over all of them instead of one.
 */
async function measureQueries(
  sql: Sql,
  postmaster: number | undefined,
  queries: Array<[string, string, (i: number) => Promise<unknown>]>,
): Promise<QueryResult[]> {
  const samples = queries.map(
    (): QuerySamples => ({ latencies: [], rates: [], seconds: 0, selfUs: 0, postgresUs: 0, machineUs: 0, walBytes: 0 }),
  );
  const add = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);
  for (let round = 0; round < QUERY_ROUNDS; round++) {
    for (const [index, [, , fn]] of queries.entries()) {
      const sample = samples[index]!;
      await drive(fn, { clients: QUERY_CONCURRENCY, seconds: QUERY_WARMUP_SECONDS });
      const before = sample.latencies.length;
      const walStart = await walPosition(sql);
      const start = cpuSnapshot(postmaster);
      const measured = await drive(fn, { clients: QUERY_CONCURRENCY, seconds: QUERY_SECONDS });
      const cpu = cpuDelta(start, cpuSnapshot(postmaster));
      if (measured.errors) throw new Error(`${measured.errors} queries failed: ${[...measured.errorMessages].join('; ')}`);
      sample.latencies.push(...measured.latencies);
      sample.walBytes = add(sample.walBytes, await walBytes(sql, walStart, await walPosition(sql)));
      sample.rates.push((sample.latencies.length - before) / cpu.seconds);
      sample.seconds += cpu.seconds;
      sample.selfUs += cpu.selfUs;
      sample.postgresUs = add(sample.postgresUs, cpu.postgresUs);
      sample.machineUs = add(sample.machineUs, cpu.machineBusyUs);
    }
  }
  return queries.map(([id, label], index) => {
    const sample = samples[index]!;
    const latencies = sample.latencies.sort((a, b) => a - b);
    const n = latencies.length;
    return {
      id,
      label,
      concurrency: QUERY_CONCURRENCY,
      operations: n,
      operationsPerSecond: round(median(sample.rates), 0)!,
      operationsPerSecondByRound: sample.rates.map((rate) => round(rate, 0)!),
      latencyMs: {
        mean: round(latencies.reduce((sum, ms) => sum + ms, 0) / n, 3)!,
        p50: round(percentile(latencies, 50), 3)!,
        p99: round(percentile(latencies, 99), 3)!,
      },
      cpuUsPerOperation: {
        node: round(sample.selfUs / n, 1)!,
        postgres: sample.postgresUs === null ? null : round(sample.postgresUs / n, 1),
        machine: sample.machineUs === null ? null : round(sample.machineUs / n, 1),
      },
      walBytesPerOperation: sample.walBytes === null ? null : round(sample.walBytes / n, 0),
      backgroundCores: background(sample.machineUs, sample.seconds, sample.selfUs, sample.postgresUs),
    };
  });
}

async function run(ctx: BenchContext) {
  const db = await ctx.database();
  const sql = db.pool({ max: POOL_SIZE, role: 'api' });
  // Usage counters go through a pool whose commits do not wait for the WAL flush, as `afterimage start` wires it.
  const asyncCommitSql = db.pool({ max: POOL_SIZE, role: 'api-counters', connection: { synchronous_commit: 'off' } });

  ctx.progress(`creating ${DISTINCT_USERS + 1} Pro users with keys; pro requestsPerMinute → unlimited`);
  const mainUser = await createUser(sql, { email: 'bench-main@example.org', tier: 'pro', isAdmin: false });
  const mainKey = await createApiKey(sql, { userId: mainUser.id });
  const others: Array<{ user: { id: string }; key: { key: string } }> = [];
  for (let i = 0; i < DISTINCT_USERS; i++) {
    const user = await createUser(sql, { email: `bench-${i}@example.org`, tier: 'pro', isAdmin: false });
    others.push({ user, key: await createApiKey(sql, { userId: user.id }) });
  }
  await updateTier(sql, 'pro', { limits: { requestsPerMinute: null } });

  // Per-request logs are serialised as in production (LOG_LEVEL=info) but not written out.
  const log = createLogger('info', {}, (line) => {
    if (!line.includes('"level":"info"') && !line.includes('"level":"debug"')) process.stderr.write(line);
  });
  const config = loadConfig({ DATA_DIR: ctx.dataDir, LOG_LEVEL: 'info', DATABASE_POOL_SIZE: String(POOL_SIZE) });
  // No video sources: the routes measured here never reach them.
  const hub = await createEventHub(sql, log);
  const deps: Parameters<typeof startApi>[0] = {
    config,
    sql,
    counterSql: asyncCommitSql,
    tiers: cachedTiers(sql),
    log,
    version: packageVersion,
    startedAt: new Date(),
    hub,
    sources: [],
  };
  // For comparison: counters committed synchronously on the main pool (the first design).
  const syncDeps: Parameters<typeof startApi>[0] = { ...deps, counterSql: undefined };

  const real = await startApi(deps, 0, '127.0.0.1');
  const bench = await listen(createApi({ ...deps, openStreams: new Set() }, [keyRoute, publicRoute]));
  const benchSync = await listen(createApi({ ...syncDeps, openStreams: new Set() }, [keyRoute, publicRoute]));
  const postmaster = await postmasterPid(sql);

  const okBody = (body: any) =>
    body?.data?.ok === true ? undefined : `expected {data:{ok:true}}, got ${JSON.stringify(body).slice(0, 200)}`;
  const variants: Variant[] = [
    {
      id: 'public-noop',
      label: 'no-op route, auth: public, rateLimited: false',
      port: () => bench.port,
      path: '/bench/public',
      keys: 'none',
      expect: okBody,
    },
    {
      id: 'key-noop',
      label: 'no-op route, auth: key + rate limit (one key)',
      port: () => bench.port,
      path: '/bench/key',
      keys: 'one',
      expect: okBody,
    },
    {
      id: 'key-noop-32-users',
      label: `no-op route, auth: key + rate limit (${DISTINCT_USERS} users, a key per connection)`,
      port: () => bench.port,
      path: '/bench/key',
      keys: 'per-connection',
      expect: okBody,
    },
    {
      id: 'key-noop-sync-counters',
      label: 'no-op route, auth: key + rate limit (one key), counters committed synchronously (for comparison)',
      port: () => benchSync.port,
      path: '/bench/key',
      keys: 'one',
      expect: okBody,
    },
    {
      id: 'features',
      label: 'GET /api/features with a Pro key (auth + rate limit + usage read)',
      port: () => real.port,
      path: '/api/features',
      keys: 'one',
      expect: (body) =>
        body?.data?.tier?.name === 'pro' && body.data.limits?.requestsPerMinute?.max === null
          ? undefined
          : `expected the pro tier with unlimited requestsPerMinute, got ${JSON.stringify(body?.data?.limits?.requestsPerMinute ?? body).slice(0, 200)}`,
    },
    {
      id: 'health',
      label: 'GET /api/health (public; one database probe), for reference',
      port: () => real.port,
      path: '/api/health',
      keys: 'none',
      expect: (body) =>
        body?.data?.database?.ok === true ? undefined : `expected a healthy database, got ${JSON.stringify(body).slice(0, 200)}`,
    },
  ];

  const flushBefore = diskFlush(ctx.dataDir);
  ctx.progress(`disk flush (8 kB write + fdatasync): ${flushBefore.flushesPerSecond}/s, ${flushBefore.meanMs} ms each`);
  const problems: string[] = [];
  const results: VariantResult[] = [];
  try {
    for (const variant of variants) {
      const url = `http://127.0.0.1:${variant.port()}${variant.path}`;
      const headers = variant.keys === 'one' ? { 'X-API-Key': mainKey.key } : undefined;
      const check = await fetch(url, { headers: variant.keys === 'per-connection' ? { 'X-API-Key': others[0]!.key.key } : headers });
      const problem =
        check.status !== 200 ? `status ${check.status}: ${(await check.text()).slice(0, 200)}` : variant.expect(await check.json());
      if (problem) {
        problems.push(`${variant.id}: ${problem}`);
        ctx.progress(`${variant.id}: check failed (${problem}); skipped`);
        continue;
      }
      ctx.progress(`${variant.id}: GET ${variant.path}, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s`);
      const outcome = await runLoad(
        {
          url,
          connections: CONNECTIONS,
          warmupSeconds: WARMUP_SECONDS,
          durationSeconds: DURATION_SECONDS,
          ...(headers ? { headers } : {}),
          ...(variant.keys === 'per-connection' ? { headersPerConnection: others.map(({ key }) => ({ 'X-API-Key': key.key })) } : {}),
        },
        { postmaster, mark: () => walPosition(sql) },
      );
      const { report, cpu } = outcome;
      const n = Math.max(1, report.requests - report.non2xx);
      const wal = await walBytes(sql, outcome.marks.start, outcome.marks.end);
      const result: VariantResult = {
        id: variant.id,
        label: variant.label,
        path: variant.path,
        keys: variant.keys,
        requests: report.requests,
        seconds: round(report.seconds, 2)!,
        requestsPerSecond: round(report.requestsPerSecond, 0)!,
        latencyMs: {
          mean: round(report.latency.mean, 3)!,
          p50: round(report.latency.p50, 3)!,
          p90: round(report.latency.p90, 3)!,
          p99: round(report.latency.p99, 3)!,
          p999: round(report.latency.p999, 3)!,
          max: round(report.latency.max, 3)!,
        },
        statusCodes: report.statusCodes,
        non2xx: report.non2xx,
        errors: report.errors,
        timeouts: report.timeouts,
        cpuUsPerRequest: {
          server: round(cpu.selfUs / n, 1)!,
          client: round(report.clientCpuUs / n, 1)!,
          postgres: cpu.postgresUs === null ? null : round(cpu.postgresUs / n, 1),
          machine: cpu.machineBusyUs === null ? null : round(cpu.machineBusyUs / n, 1),
        },
        machineUtilisation: cpu.machineBusyUs === null ? null : round(cpu.machineBusyUs / (cpu.seconds * 1e6 * cpus().length), 2),
        walBytesPerRequest: wal === null ? null : round(wal / n, 0),
        backgroundCores: background(cpu.machineBusyUs, cpu.seconds, cpu.selfUs, report.clientCpuUs, cpu.postgresUs),
      };
      results.push(result);
      if (report.non2xx || report.errors || report.timeouts) {
        problems.push(
          `${variant.id}: ${report.non2xx} non-2xx (${JSON.stringify(report.statusCodes)}), ${report.errors} errors, ${report.timeouts} timeouts`,
        );
      }
      ctx.progress(
        `${variant.id}: ${result.requestsPerSecond} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, non-2xx ${report.non2xx}, errors ${report.errors}`,
      );
      await sleep(500);
    }
  } finally {
    await Promise.all([real.close(), bench.close(), benchSync.close()]);
    await hub.close();
  }

  ctx.progress(
    `query by query, in process: ${QUERY_CONCURRENCY} in flight, ${QUERY_ROUNDS} rounds of ${QUERY_SECONDS} s each, taking turns`,
  );
  const hash = hashApiKey(mainKey.key);
  const tiers = await deps.tiers.get();
  const pro = tiers.get('pro')!;
  const rule = pro.limits.requestsPerMinute;
  const features = Object.values(pro.limits).map((limit) => ({ subject: mainUser.id, rule: limit }));
  // A subject that has used its one request: every further call is refused.
  const overLimit = { subject: randomUUID(), rule: { ...rule, max: 1 } };
  await consumeQuota(sql, overLimit.subject, overLimit.rule);
  const queries: Array<[string, string, (i: number) => Promise<unknown>]> = [
    ['select-1', 'select 1 (round-trip floor)', () => sql`select 1`],
    ['find-api-key', 'findApiKey: key → owner and tier (authentication)', () => findApiKey(sql, hash)],
    ['consume-quota', 'consumeQuota requestsPerMinute, one user (rate limit)', () => consumeQuota(sql, mainUser.id, rule)],
    [
      'consume-quota-32-users',
      `consumeQuota requestsPerMinute, ${DISTINCT_USERS} users in turn`,
      (i) => consumeQuota(sql, others[i % others.length]!.user.id, rule),
    ],
    [
      'consume-quota-async-commit',
      'consumeQuota, one user, synchronous_commit=off (what-if)',
      () => consumeQuota(asyncCommitSql, mainUser.id, rule),
    ],
    [
      'consume-quota-refused',
      'consumeQuota over the limit (refused: 429), one user',
      () => consumeQuota(sql, overLimit.subject, overLimit.rule),
    ],
    ['read-quotas', `readQuotas, ${features.length} limits (what /api/features adds)`, () => readQuotas(sql, features)],
  ];
  const queryResults = await measureQueries(sql, postmaster, queries);
  for (const result of queryResults) {
    ctx.progress(
      `${result.id}: ${result.operationsPerSecond} ops/s (${result.operationsPerSecondByRound.join(' / ')}), mean ${result.latencyMs.mean} ms, PostgreSQL ${result.cpuUsPerOperation.postgres ?? '?'} µs/op`,
    );
  }

  const flushAfter = diskFlush(ctx.dataDir);
  ctx.progress(`disk flush (8 kB write + fdatasync): ${flushAfter.flushesPerSecond}/s, ${flushAfter.meanMs} ms each`);
  return { results, queryResults, problems, database: db, diskFlush: { before: flushBefore, after: flushAfter } };
}

/** What authentication + rate limiting add to a request: key-noop − public-noop, per figure. */
function authCost(variants: VariantResult[]) {
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
