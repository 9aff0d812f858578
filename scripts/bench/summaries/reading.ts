import { connect } from '../../../core/db/database.ts';
import type { GeneratedSummary } from '../../../core/summaries/summary.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import type { Vocabulary } from '../lib/corpus.ts';
import type { BenchContext } from '../lib/harness.ts';
import type { Sample } from '../lib/load.ts';
import { postmasterPid, sourcelessApiEnv, startService } from '../lib/processes.ts';
import { median, percentile, secondsSince } from '../lib/stats.ts';
import { buildDatabase } from './build.ts';
import { explainCall, type PlanTiming } from './explain.ts';
import { queryClasses } from './queries.ts';
import { driveMeasured, driveVariants, httpGetter, newMeasuredSample, stats, type Stats } from './sampling.ts';
import {
  CHANNELS,
  CLIENTS,
  POOL_SIZE,
  REQUESTS_PER_ROUND,
  ROUNDS,
  ROUND_SECONDS,
  SINGLE_REQUESTS,
  SUMMARIES,
  TARGET,
  WARMUP_REQUESTS,
  ms,
} from './shape.ts';

interface ClassResult {
  id: string;
  label: string;
  judged: boolean;
  variants: string[];
  inProcess: Stats;
  http: Stats;
  /** One client alone: latency without queueing. */
  inProcessAlone: { p50: number | null; p95: number | null };
  httpAlone: { p50: number | null; p95: number | null };
  /** Median ms of each variant, one client alone in process: what each costs without queueing. */
  variantMedians: Array<{ variant: string; ms: number | null }>;
  /** The variant with the highest 25th percentile alone (the one explained when the class misses). */
  slowestVariant: number;
}
export async function measureReading(ctx: BenchContext, vocabulary: Vocabulary, templates: GeneratedSummary[]) {
  const db = await ctx.database();
  // Building takes statements longer than the harness pools' 15 s timeout: a pool without one.
  const buildSql = connect(db.url, { max: 1, role: 'bench-build' });
  const sql = db.pool({ max: POOL_SIZE, role: 'api' });
  const problems: string[] = [];
  let api: Awaited<ReturnType<typeof startService>> | undefined;
  let http: ReturnType<typeof httpGetter> | undefined;
  try {
    ctx.progress(
      `building ${SUMMARIES.toLocaleString('en')} public summaries in ${CHANNELS.toLocaleString('en')} channels (+ private, failed and generating ones)`,
    );
    const build = await buildDatabase(ctx, buildSql, vocabulary, templates);
    problems.push(...build.checks);
    ctx.progress(
      `built in ${build.seconds.total} s (vacuum + analyze ${build.seconds.vacuumAnalyze} s); ${build.rows.facets.toLocaleString('en')} facet rows; checks: ${build.checks.length ? build.checks.join('; ') : 'all agree'}`,
    );

    // Anonymous callers may browse; their 30 requests a minute would stop the load at once.
    await updateTier(sql, 'anonymous', { limits: { requestsPerMinute: null } });
    api = await startService('api', { ...sourcelessApiEnv(ctx.dataDir, db.url, 'summaries'), DATABASE_POOL_SIZE: String(POOL_SIZE) });
    http = httpGetter(api.url!);
    const client = http;

    const classes = await queryClasses(sql);
    // Every variant once each way: same answers, no private, failed or generating summary shown, 200s only.
    for (const query of classes) {
      for (const variant of query.variants) {
        const local = await query.inProcess(sql, variant);
        if (local.privateShown) problems.push(`${query.id} ${variant.describe}: ${local.privateShown} private or unready summaries listed`);
        const answer = await client.get(variant.path);
        if (answer.status !== 200) {
          problems.push(`${query.id} GET ${variant.path}: status ${answer.status} ${answer.body.slice(0, 200)}`);
          continue;
        }
        const body = JSON.parse(answer.body) as {
          data: { items?: Array<{ videoId: string; private: boolean; status: string }>; total?: number };
        };
        const items = body.data.items;
        if (items && variant.browse) {
          if (items.some((item) => item.private || item.status !== 'generated'))
            problems.push(`${query.id} GET ${variant.path}: private or unready summaries listed`);
          if (items.map((item) => item.videoId).join() !== local.ids.join())
            problems.push(`${query.id} GET ${variant.path}: another page than browseSummaries`);
          if (body.data.total !== undefined && body.data.total !== local.total)
            problems.push(`${query.id} GET ${variant.path}: total ${body.data.total}, browseSummaries says ${local.total}`);
        }
      }
    }

    const processes = { postmaster: await postmasterPid(sql), api: api.pid };
    const samples = classes.map(() => ({
      inProcess: newMeasuredSample(),
      http: newMeasuredSample(),
      inProcessAlone: newMeasuredSample(),
      httpAlone: newMeasuredSample(),
    }));
    const measureStarted = performance.now();
    const loaded = { count: REQUESTS_PER_ROUND, seconds: ROUND_SECONDS, clients: CLIENTS };
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
      for (const [index, query] of classes.entries()) {
        const engines = [
          {
            sample: samples[index]!.inProcess,
            alone: samples[index]!.inProcessAlone,
            call: (v: number) => query.inProcess(sql, query.variants[v]!),
          },
          {
            sample: samples[index]!.http,
            alone: samples[index]!.httpAlone,
            call: async (v: number) => {
              const answer = await client.get(query.variants[v]!.path);
              if (answer.status !== 200) throw new Error(`status ${answer.status}: ${answer.body.slice(0, 200)}`);
              return Buffer.byteLength(answer.body);
            },
          },
        ];
        // Engines take turns, starting with a different one each round.
        for (let turn = 0; turn < engines.length; turn++) {
          const engine = engines[(turn + roundIndex + index) % engines.length]!;
          await driveVariants(engine.call, query.variants.length, { ...loaded, count: WARMUP_REQUESTS });
          await driveMeasured(engine.call, query.variants.length, loaded, engine.sample, processes);
          await driveVariants(
            engine.call,
            query.variants.length,
            { count: SINGLE_REQUESTS, seconds: ROUND_SECONDS, clients: 1 },
            engine.alone,
          );
        }
      }
    }
    const measureSeconds = secondsSince(measureStarted);

    // By the 25th percentile alone: a variant that is slow every time, not one that met a slow connection now and then.
    const slowestOf = (sample: Sample) => {
      const medians = sample.byVariant.map((list) =>
        list.length
          ? percentile(
              [...list].sort((x, y) => x - y),
              25,
            )
          : -1,
      );
      return medians.reduce((best, value, v) => (value > (medians[best] ?? -1) ? v : best), 0);
    };
    const alone = (sample: Sample) => {
      const sorted = [...sample.latencies].sort((x, y) => x - y);
      return { p50: ms(percentile(sorted, 50), 2), p95: ms(percentile(sorted, 95), 2) };
    };
    const results: ClassResult[] = classes.map((query, index) => ({
      id: query.id,
      label: query.label,
      judged: query.judged,
      variants: query.variants.map((variant) => variant.describe),
      inProcess: stats(samples[index]!.inProcess),
      http: stats(samples[index]!.http),
      inProcessAlone: alone(samples[index]!.inProcessAlone),
      httpAlone: alone(samples[index]!.httpAlone),
      variantMedians: query.variants.map((variant, v) => ({
        variant: variant.describe,
        ms: ms(median(samples[index]!.inProcessAlone.byVariant[v] ?? []), 2),
      })),
      slowestVariant: slowestOf(samples[index]!.inProcessAlone),
    }));
    for (const [index, result] of results.entries()) {
      ctx.progress(
        `${result.id}: in process p50 ${result.inProcess.p50} p95 ${result.inProcess.p95} ms (alone ${result.inProcessAlone.p50}), Node ${result.inProcess.cpuUs.self} µs + PG ${result.inProcess.cpuUs.postgres} µs; ` +
          `HTTP p50 ${result.http.p50} p95 ${result.http.p95} ms (alone ${result.httpAlone.p50}), API ${result.http.cpuUs.api} µs + PG ${result.http.cpuUs.postgres} µs, ${result.http.kilobytesPerResponse} KB; other cores ${result.inProcess.otherCores}/${result.http.otherCores}`,
      );
      for (const [engine, sample] of [
        ['in process', samples[index]!.inProcess],
        ['HTTP', samples[index]!.http],
      ] as const) {
        if (sample.errors) problems.push(`${result.id} ${engine}: ${sample.errors} errors (${[...sample.errorMessages].join('; ')})`);
      }
    }

    // Which plans the pool's connections settled on: postgres.js prepares every statement, and after
    // 5 runs a connection may keep the generic plan. Every connection is reserved at once to read it.
    const reserved = await Promise.all(Array.from({ length: POOL_SIZE }, () => sql.reserve()));
    const planCache = new Map<
      string,
      { statement: string; connections: number; genericConnections: number; genericRuns: number; customRuns: number }
    >();
    try {
      for (const connection of reserved) {
        const rows = await connection<{ statement: string; generic: number; custom: number }[]>`
          select statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
          where statement ~ 'from summar(ies|y_facets)'`;
        // One statement text may be prepared more than once on a connection (other parameter types).
        const mine = new Map<string, { generic: number; custom: number }>();
        for (const row of rows) {
          const key = row.statement.replace(/\s+/g, ' ').trim();
          const seen = mine.get(key) ?? { generic: 0, custom: 0 };
          mine.set(key, { generic: seen.generic + row.generic, custom: seen.custom + row.custom });
        }
        for (const [key, used] of mine) {
          const entry = planCache.get(key) ?? { statement: key, connections: 0, genericConnections: 0, genericRuns: 0, customRuns: 0 };
          entry.connections += 1;
          if (used.generic > 0) entry.genericConnections += 1;
          entry.genericRuns += used.generic;
          entry.customRuns += used.custom;
          planCache.set(key, entry);
        }
      }
    } finally {
      for (const connection of reserved) connection.release();
    }
    const plansUsed = [...planCache.values()].sort((a, b) => b.genericRuns - a.genericRuns);

    // Plans of every query whose class missed the p95 target in process (its slowest variant) or over HTTP.
    const explained: Array<{
      id: string;
      variant: string;
      p95InProcess: number | null;
      p95Http: number | null;
      aloneMedianMs: number | null;
      timings: PlanTiming[];
      plan: string;
    }> = [];
    for (const [index, query] of classes.entries()) {
      const result = results[index]!;
      if ((result.inProcess.p95 ?? Infinity) <= TARGET.p95Ms && (result.http.p95 ?? Infinity) <= TARGET.p95Ms) continue;
      const variant = query.variants[result.slowestVariant]!;
      const { plan, timings } = await explainCall(db.url, (pool) => query.inProcess(pool, variant)).catch((error: Error) => ({
        plan: `EXPLAIN failed: ${error.message}`,
        timings: [],
      }));
      explained.push({
        id: query.id,
        variant: variant.describe,
        p95InProcess: result.inProcess.p95,
        p95Http: result.http.p95,
        aloneMedianMs: result.variantMedians[result.slowestVariant]?.ms ?? null,
        timings,
        plan,
      });
    }
    return { build, results, explained, plansUsed, measureSeconds, problems };
  } finally {
    http?.close();
    await api?.stop();
    await buildSql.end({ timeout: 5 });
  }
}

// ---------------------------------------------------------------------------------------------------
// The benchmark
