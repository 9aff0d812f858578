/**
 * The web app's cost over the API: the HTML search page (`/search?q=…`) against GET /api/fts for the same
 * queries (the fts benchmark's generated archive and query mix), both served by `afterimage api` in its own
 * process. Target: the page costs the API process at most 3 ms of CPU more per request.
 */
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createSession } from '../../core/accounts/createSession.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { connect } from '../../core/db/database.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { frequencyCounter, QUERY_CLASSES, queryMix } from '../../test/kit/corpus-queries.ts';
import { generatedBatches, writeCorpus } from '../../test/kit/corpus-write.ts';
import { createCorpus } from '../../test/kit/corpus.ts';
import { type Benchmark, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { sourcelessApiEnv, startService } from './lib/processes.ts';
import { distribution } from './lib/stats.ts';
import { cpuOf } from './lib/usage.ts';

const VIDEOS = numberKnob('WEB_BENCH_VIDEOS', 1_000_000);
const ROUNDS = numberKnob('WEB_BENCH_ROUNDS', 10);
const TARGET_EXTRA_CPU_US = 3_000;

const ROUTES = {
  json: { path: (q: string) => `/api/fts?q=${encodeURIComponent(q)}&pageSize=20`, accept: 'application/json', marker: '{"data":' },
  html: { path: (q: string) => `/search?q=${encodeURIComponent(q)}`, accept: 'text/html', marker: 'id="results-heading"' },
};
type RouteName = keyof typeof ROUTES;

export const benchmark: Benchmark = {
  name: 'web',
  title: 'Web app: the HTML search page vs GET /api/fts',
  description:
    `\`afterimage api\` as a child process over the fts benchmark's generated archive (${VIDEOS.toLocaleString('en')} videos) and query mix. ` +
    `One client, one request at a time: each query as GET /api/fts (JSON, 20 results) and as the search page (HTML, 20 results), ${ROUNDS} rounds, ` +
    `the two taking turns. Target: the page costs the API process at most ${TARGET_EXTRA_CPU_US / 1000} ms of CPU more per request.`,
  async run(ctx) {
    const db = await ctx.database();
    // Building a million rows takes statements longer than the harness pools' 15 s timeout: none here.
    const sql = connect(db.url, { max: 2, role: 'bench-build' });
    const corpus = createCorpus({ seed: 1, videos: VIDEOS });
    const counter = frequencyCounter(corpus);
    await writeCorpus(sql, corpus, { batches: generatedBatches(corpus, { counter }) });
    await sql`select gin_clean_pending_list('videos_fts'::regclass)`;
    await sql`vacuum analyze videos`;
    await refreshSearchWords(sql);
    ctx.progress(`${VIDEOS.toLocaleString('en')} videos written, indexed and analysed`);
    const mix = queryMix(corpus, counter.table());
    const queries = QUERY_CLASSES.flatMap((name) => mix.queries[name]);
    const user = await createUser(sql, { email: 'web-bench@example.org', tier: 'pro', isAdmin: false });
    const { key } = await createApiKey(sql, { userId: user.id });
    // Pages know a visitor by the session cookie only, the API by the key.
    const signedIn = { json: { 'X-API-Key': key }, html: { Cookie: `afterimage_session=${(await createSession(sql, user.id)).token}` } };
    await updateTier(sql, 'pro', { limits: { ftsQueriesPerMinute: null, requestsPerMinute: null } });
    await sql.end();
    const api = await startService('api', sourcelessApiEnv(ctx.dataDir, db.url, 'web'));
    const measured = { json: { ms: [] as number[], cpuUs: 0 }, html: { ms: [] as number[], cpuUs: 0 } };
    const problems: string[] = [];
    const pass = async (name: RouteName, into = { ms: [] as number[], cpuUs: 0 }) => {
      const route = ROUTES[name];
      const cpuBefore = cpuOf(api.pid)!;
      for (const q of queries) {
        const started = performance.now();
        const response = await fetch(`${api.url}${route.path(q)}`, { headers: { Accept: route.accept, ...signedIn[name] } });
        const body = await response.text();
        into.ms.push(performance.now() - started);
        if ((response.status !== 200 || !body.includes(route.marker)) && problems.length < 3)
          problems.push(`${name} ${q}: ${response.status} ${body.slice(0, 200)}`);
      }
      into.cpuUs += cpuOf(api.pid)! - cpuBefore;
    };
    try {
      // Warm-up: the first requests compile what the rest reuse (zod, preact, the plans).
      await pass('json');
      await pass('html');
      for (let round = 0; round < ROUNDS; round++)
        for (const name of round % 2 ? (['html', 'json'] as const) : (['json', 'html'] as const)) await pass(name, measured[name]);
    } finally {
      await api.stop();
    }
    const summary = (name: RouteName) => ({
      latencyMs: distribution(measured[name].ms, 2),
      apiCpuUsPerRequest: Math.round(measured[name].cpuUs / measured[name].ms.length),
    });
    const json = summary('json');
    const html = summary('html');
    const extraCpuUs = html.apiCpuUsPerRequest - json.apiCpuUsPerRequest;
    ctx.progress(`API CPU per request: JSON ${json.apiCpuUsPerRequest} µs, page ${html.apiCpuUsPerRequest} µs (Δ ${extraCpuUs} µs)`);
    return {
      parameters: { videos: VIDEOS, rounds: ROUNDS, queries: queries.length, pageSize: 20 },
      results: { json, html, extraCpuUsPerRequest: extraCpuUs },
      targets: [target('API CPU per request, page − JSON (µs)', extraCpuUs, { atMost: TARGET_EXTRA_CPU_US })],
      ok: problems.length === 0,
      problems,
    };
  },
};
