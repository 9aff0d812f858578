/**
 * The web app's cost over the API: the HTML search page (`/search?q=…`, api/web/pages/search.tsx)
 * against GET /api/fts for the same queries (the fts benchmark's generated archive and query mix,
 * test/kit/corpus*.ts), both served by `afterimage api` in its own process. Per request: client-side
 * p50/p95 and the API process's CPU (from /proc). Target (issue 30): the page costs at most 3 ms of
 * CPU more than the JSON route that reads the same data.
 */
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { connect } from '../../core/db/database.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { frequencyCounter, QUERY_CLASSES, queryMix } from '../../test/kit/corpus-queries.ts';
import { generatedBatches, writeCorpus } from '../../test/kit/corpus-write.ts';
import { createCorpus } from '../../test/kit/corpus.ts';
import { type Benchmark, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { type ServiceProcess, sourcelessApiEnv, startService } from './lib/processes.ts';
import { percentile, round } from './lib/stats.ts';
import { cpuOf } from './lib/usage.ts';

const DEFAULT_VIDEOS = 1_000_000; // the fts benchmark's scale
const VIDEOS = numberKnob('WEB_BENCH_VIDEOS', DEFAULT_VIDEOS);
const ROUNDS = numberKnob('WEB_BENCH_ROUNDS', 10);
const SEED = 1;
const PAGE_SIZE = 20; // the search page's default
const TARGET_CPU_US = 3_000;

interface Route {
  id: 'html' | 'json';
  label: string;
  url(q: string): string;
  accept: string;
  check(body: string): boolean;
}

interface Series {
  latencies: number[];
  cpuUs: number;
  failures: number;
  firstFailure: string | null;
}

function routes(baseUrl: string): Route[] {
  return [
    {
      id: 'json',
      label: `GET /api/fts?q=…&pageSize=${PAGE_SIZE} (JSON)`,
      url: (q) => `${baseUrl}/api/fts?q=${encodeURIComponent(q)}&pageSize=${PAGE_SIZE}`,
      accept: 'application/json',
      check: (body) => body.startsWith('{"data":'),
    },
    {
      id: 'html',
      label: `GET /search?q=… (HTML page, ${PAGE_SIZE} results)`,
      url: (q) => `${baseUrl}/search?q=${encodeURIComponent(q)}`,
      accept: 'text/html',
      check: (body) => body.includes('id="results-heading"'),
    },
  ];
}

/** Every query once, one after another, adding its latency and the API's CPU to `series`. */
async function pass(api: ServiceProcess, route: Route, key: string, queries: string[], series: Series) {
  const cpuBefore = cpuOf(api.pid)!;
  for (const q of queries) {
    const started = performance.now();
    const response = await fetch(route.url(q), { headers: { Accept: route.accept, 'X-API-Key': key } });
    const body = await response.text();
    series.latencies.push(performance.now() - started);
    if (response.status !== 200 || !route.check(body)) {
      series.failures += 1;
      series.firstFailure ??= `${route.id} ${q}: ${response.status} ${body.slice(0, 200)}`;
    }
  }
  series.cpuUs += cpuOf(api.pid)! - cpuBefore;
}

export const benchmark: Benchmark = {
  name: 'web',
  title: 'Web app: the HTML search page vs GET /api/fts',
  description:
    `\`afterimage api\` as a child process over the fts benchmark's generated archive (${VIDEOS.toLocaleString('en')} videos: WEB_BENCH_VIDEOS, default ${DEFAULT_VIDEOS.toLocaleString('en')}) and query mix. ` +
    `One client, one request at a time: each query of the mix as GET /api/fts (JSON) and as the search page (HTML), ${ROUNDS} rounds, the two taking turns round by round. ` +
    `Target: the page costs the API process at most ${TARGET_CPU_US / 1000} ms of CPU more per request than the JSON route.`,
  async run(ctx) {
    const db = await ctx.database();
    // Building a million rows takes statements longer than the harness pools' 15 s timeout: none here.
    const sql = connect(db.url, { max: 2, role: 'bench-build' });
    const corpus = createCorpus({ seed: SEED, videos: VIDEOS });
    const counter = frequencyCounter(corpus);
    let reported = 0;
    const written = await writeCorpus(sql, corpus, {
      batches: generatedBatches(corpus, { counter }),
      onProgress: (done, total) => {
        if (done < total && done - reported < total / 10) return;
        reported = done;
        ctx.progress(`ingest: ${done.toLocaleString('en')} videos`);
      },
    });
    // As the fts benchmark does: the GIN pending list merged and the table vacuumed before measuring.
    await sql`select gin_clean_pending_list('videos_fts'::regclass)`;
    await sql`vacuum analyze videos`;
    await refreshSearchWords(sql);
    ctx.progress(`${VIDEOS.toLocaleString('en')} videos written in ${round(written.seconds, 1)} s, indexed and analysed`);
    const mix = queryMix(corpus, counter.table());
    const queries = QUERY_CLASSES.flatMap((name) => mix.queries[name]);
    const user = await createUser(sql, { email: 'web-bench@example.org', tier: 'pro', isAdmin: false });
    const { key } = await createApiKey(sql, { userId: user.id });
    await updateTier(sql, 'pro', { limits: { ftsQueriesPerMinute: null, requestsPerMinute: null } });
    const api = await startService('api', sourcelessApiEnv(ctx.dataDir, db.url, 'web'));
    const series = new Map<Route['id'], Series>();
    const problems: string[] = [];
    try {
      const list = routes(api.url!);
      for (const route of list) series.set(route.id, { latencies: [], cpuUs: 0, failures: 0, firstFailure: null });
      // Warm-up: the first requests compile what the rest reuse (zod, preact, the plans).
      for (const route of list) await pass(api, route, key, queries, { latencies: [], cpuUs: 0, failures: 0, firstFailure: null });
      for (let round_ = 0; round_ < ROUNDS; round_++) {
        for (const route of round_ % 2 ? [...list].reverse() : list) await pass(api, route, key, queries, series.get(route.id)!);
      }
    } finally {
      await api.stop();
      await sql.end();
    }
    const measured = routes('').map((route) => {
      const s = series.get(route.id)!;
      if (s.failures) problems.push(`${route.id}: ${s.failures} of ${s.latencies.length} failed, first: ${s.firstFailure}`);
      const sorted = [...s.latencies].sort((a, b) => a - b);
      return {
        id: route.id,
        label: route.label,
        requests: sorted.length,
        p50Ms: round(percentile(sorted, 50), 2)!,
        p95Ms: round(percentile(sorted, 95), 2)!,
        meanMs: round(sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length, 2)!,
        apiCpuUsPerRequest: round(s.cpuUs / sorted.length, 0)!,
      };
    });
    const [json, html] = measured as [(typeof measured)[number], (typeof measured)[number]];
    const extraCpuUs = html.apiCpuUsPerRequest - json.apiCpuUsPerRequest;
    if (extraCpuUs > TARGET_CPU_US)
      problems.push(`the page costs ${extraCpuUs} µs of CPU more than the JSON route, over the ${TARGET_CPU_US} µs target`);
    ctx.progress(
      `JSON p50 ${json.p50Ms} ms, ${json.apiCpuUsPerRequest} µs CPU; HTML p50 ${html.p50Ms} ms, ${html.apiCpuUsPerRequest} µs CPU; Δ ${extraCpuUs} µs`,
    );
    return {
      parameters: {
        videos: VIDEOS,
        rounds: ROUNDS,
        queries: queries.length,
        pageSize: PAGE_SIZE,
        targetExtraCpuUs: TARGET_CPU_US,
        database: `${db.server} PostgreSQL ${db.serverVersion}`,
      },
      results: { measured, extraCpuUsPerRequest: extraCpuUs, queries },
      targets: [target('API CPU per request, page − JSON (µs)', extraCpuUs, { atMost: TARGET_CPU_US })],
      ok: problems.length === 0,
      problems,
    };
  },
};
