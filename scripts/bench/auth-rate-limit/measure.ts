import { buildServices } from '../../../core/services/buildServices.ts';
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { createApi, startApi } from '../../../api/server.ts';
import { createEventHub } from '../../../api/sse/hub.ts';
import { cachedApiKeys } from '../../../core/accounts/cachedApiKeys.ts';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { findApiKey } from '../../../core/accounts/findApiKey.ts';
import { loadConfig } from '../../../core/config.ts';
import { hashApiKey } from '../../../core/keys.ts';
import { createLogger } from '../../../core/log.ts';
import { cachedTiers } from '../../../core/tiers/loadTiers.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { consumeQuota, readQuotas } from '../../../core/usage/consumeQuota.ts';
import { type BenchContext, packageVersion, sleep } from '../lib/harness.ts';
import { type LoadOutcome, runLoad } from '../lib/load.ts';
import { postmasterPid } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { background, diskFlush, measureQueries, walBytes, walPosition } from './queries.ts';
import { keyRoute, listen, publicRoute } from './routes.ts';
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

interface Variant {
  id: string;
  label: string;
  port: () => number;
  path: string;
  /** none, one key on every connection, or one key per connection */
  keys: 'none' | 'one' | 'per-connection';
  expect: (body: any) => string | undefined;
}

export interface VariantResult {
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

export async function run(ctx: BenchContext) {
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
  const tierCache = cachedTiers(sql);
  const apiKeys = await cachedApiKeys(sql, { tiers: tierCache });
  const deps: Parameters<typeof startApi>[0] = {
    config,
    sql,
    counterSql: asyncCommitSql,
    tiers: tierCache,
    apiKeys,
    log,
    version: packageVersion,
    startedAt: new Date(),
    hub,
    ...(await buildServices(config, { sql, log }, { sources: [] })),
  };
  // For comparison: counters committed synchronously on the main pool (the first design).
  const syncDeps: Parameters<typeof startApi>[0] = { ...deps, counterSql: sql };

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
    await apiKeys.close();
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
