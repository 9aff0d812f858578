import { Agent, request } from 'node:http';
import { connect, type Sql } from '../../../core/db/database.ts';
import { browseSummaries, type BrowseFilters } from '../../../core/summaries/browseSummaries.ts';
import type { GeneratedSummary } from '../../../core/summaries/summary.ts';
import { summaryChannels, summaryLanguages, summaryTags } from '../../../core/summaries/summaryFacets.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import type { Vocabulary } from '../lib/corpus.ts';
import type { BenchContext } from '../lib/harness.ts';
import { drive, newSample, requestStats } from '../lib/load.ts';
import { sourcelessApiEnv, startService } from '../lib/processes.ts';
import { buildSummaries } from './build.ts';

export const LOAD = {
  clients: 8,
  poolSize: 10, // DATABASE_POOL_SIZE's default, as the API process uses
  pageSize: 20, // the browse route's default limit
  deepPages: [480, 490, 500], // the deepest pages served (10,000 results)
  rounds: 2,
  requestsPerRound: 240,
  roundSeconds: 1.5,
  warmupRequests: 30,
  /** Requests of one client alone per round: the latency without queueing behind the others. */
  aloneRequests: 30,
};

interface Variant {
  path: string;
  call(sql: Sql): Promise<unknown>;
}
const browse = (filters: BrowseFilters, page = 1): Variant => {
  const query = new URLSearchParams({ limit: String(LOAD.pageSize), ...filters, ...(page > 1 ? { page: String(page) } : {}) });
  return {
    path: `/api/summary/browse?${query}`,
    call: (sql) => browseSummaries(sql, filters, { offset: (page - 1) * LOAD.pageSize, limit: LOAD.pageSize }),
  };
};

/** Browse with every combination of filters, common to rare, first and deep pages; latest; the facet lists. */
async function queryClasses(sql: Sql, summaries: number) {
  const facet = (name: string) =>
    sql<{ value: string; language: string; count: number }[]>`
      select value, language, count from summary_facets where facet = ${name} order by count desc, value`;
  const tags = (await facet('tag')).filter((tag) => tag.language === '');
  const common = tags.slice(0, 5);
  const mid = tags.filter((tag) => tag.count >= summaries * 0.004 && tag.count <= summaries * 0.01).slice(0, 5);
  const rare = tags.filter((tag) => tag.count >= 5 && tag.count <= 30).filter((_, i) => i % 97 === 0);
  const channels = await facet('channel');
  const spread = Array.from({ length: 12 }, (_, i) => channels[Math.floor((i * (channels.length - 1)) / 11)]!).filter(Boolean);
  const languages = await facet('language');
  // A popular tag of each language but the biggest, with that language.
  const tagLanguage = await sql<{ value: string; language: string }[]>`
    select distinct on (language) value, language from summary_facets
    where facet = 'tag' and language not in ('', ${languages[0]!.value}) order by language, count desc, value`;
  // Six channels with their most used tag, their own language and the rarest one.
  const mixes = await sql<{ channelId: string; tag: string; languages: string[] }[]>`
    select c.channel_id as "channelId",
      (select e.tag from summary_list_entries e where e.channel_id = c.channel_id and e.tag <> '' group by 1 order by count(*) desc, 1 limit 1) as tag,
      array[(select e.language from summary_list_entries e where e.channel_id = c.channel_id and e.tag = '' group by 1 order by count(*) desc, 1 limit 1),
        (select l.value from summary_facets l where l.facet = 'language' order by l.count, l.value limit 1)] as languages
    from unnest(${spread.slice(0, 6).map((c) => c.value)}::text[]) as c(channel_id)`;
  const single = (path: string, call: Variant['call']) => [{ path, call }];
  const classes: Array<[string, Variant[]]> = [
    ['browse-all', [browse({})]],
    ['browse-tag-common', common.map((t) => browse({ tag: t.value }))],
    ['browse-tag-mid', mid.map((t) => browse({ tag: t.value }))],
    ['browse-tag-rare', rare.slice(0, 8).map((t) => browse({ tag: t.value }))],
    ['browse-channel', spread.map((c) => browse({ channelId: c.value }))],
    ['browse-language', languages.map((l) => browse({ language: l.value }))],
    ['browse-tag-language', tagLanguage.map((t) => browse({ tag: t.value, language: t.language }))],
    ['browse-tag-channel', mixes.map((c) => browse({ tag: c.tag, channelId: c.channelId }))],
    ['browse-channel-language', mixes.flatMap((c) => c.languages.map((language) => browse({ channelId: c.channelId, language })))],
    [
      'browse-tag-channel-language',
      mixes.flatMap((c) => c.languages.map((language) => browse({ tag: c.tag, channelId: c.channelId, language }))),
    ],
    ['browse-tag-deep', common.slice(0, 2).flatMap((t) => LOAD.deepPages.map((page) => browse({ tag: t.value }, page)))],
    ['browse-deep', LOAD.deepPages.map((page) => browse({}, page))],
    ['latest', single(`/api/summary/latest?limit=${LOAD.pageSize}`, (pool) => browse({}).call(pool))],
    ['tags', single('/api/summary/tags', (pool) => summaryTags(pool, { limit: 50 }))],
    ['languages', single('/api/summary/languages', (pool) => summaryLanguages(pool))],
    ['channels', single('/api/summary/channels', (pool) => summaryChannels(pool, { offset: 0, limit: 50 }))],
  ];
  // A small build may have no tag in some band of frequency; browse, latest and tags are held to the p95 target.
  return classes
    .filter(([, variants]) => variants.length > 0)
    .map(([id, variants]) => ({ id, variants, judged: id !== 'languages' && id !== 'channels' }));
}

/** GET on the API with keep-alive connections, as a client library would; resolves with the body's size. */
function httpGetter(baseUrl: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: LOAD.clients });
  const { hostname, port } = new URL(baseUrl);
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request({ agent, hostname, port, path }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`GET ${path}: status ${res.statusCode}`))));
        res.on('error', reject);
      });
      req.on('error', reject).end();
    });
  return { get, close: () => agent.destroy() };
}

/** Builds the database, then reads every class in process (core/summaries/) and over HTTP (`afterimage api`). */
export async function measureReading(ctx: BenchContext, vocabulary: Vocabulary, templates: GeneratedSummary[], problems: string[]) {
  const db = await ctx.database();
  ctx.progress('building the summaries');
  // The build's statements run longer than the harness pools' statement timeout: a pool without one.
  const buildSql = connect(db.url, { max: 1, role: 'bench-build' });
  const build = await buildSummaries(buildSql, vocabulary, templates).finally(() => buildSql.end({ timeout: 5 }));
  ctx.progress(`${build.summaries} summaries in ${build.bulkSeconds} s, their counts and list entries in ${build.countsSeconds} s`);
  const sql = db.pool({ max: LOAD.poolSize, role: 'api' });
  // Anonymous callers may browse; their 30 requests a minute would stop the load at once.
  await updateTier(sql, 'anonymous', { limits: { requestsPerMinute: null } });
  const env = sourcelessApiEnv(ctx.dataDir, db.url, 'summaries');
  const api = await startService('api', { ...env, DATABASE_POOL_SIZE: String(LOAD.poolSize) });
  const http = httpGetter(api.url!);
  try {
    const results = [];
    for (const query of await queryClasses(sql, build.summaries)) {
      const variant = (i: number) => query.variants[i % query.variants.length]!;
      const engines = [
        { name: 'inProcess', call: (i: number) => variant(i).call(sql), loaded: newSample(), alone: newSample() },
        { name: 'http', call: (i: number) => http.get(variant(i).path), loaded: newSample(), alone: newSample() },
      ];
      const loaded = { clients: LOAD.clients, seconds: LOAD.roundSeconds };
      for (let round = 0; round < LOAD.rounds; round++)
        // Engines take turns, the other one first in the next round.
        for (const engine of round % 2 ? [...engines].reverse() : engines) {
          await drive(engine.call, { ...loaded, count: LOAD.warmupRequests });
          await drive(engine.call, { ...loaded, count: LOAD.requestsPerRound }, engine.loaded);
          await drive(engine.call, { clients: 1, seconds: LOAD.roundSeconds, count: LOAD.aloneRequests }, engine.alone);
        }
      for (const { name, loaded, alone } of engines)
        if (loaded.errors + alone.errors)
          problems.push(`${query.id} ${name}: ${loaded.errors + alone.errors} errors (${[...loaded.errorMessages].join('; ')})`);
      const [inProcess, overHttp] = engines.map(({ loaded, alone }) => ({
        loaded: requestStats([loaded], 2),
        alone: requestStats([alone], 2),
      }));
      results.push({ id: query.id, judged: query.judged, variants: query.variants.length, inProcess: inProcess!, http: overHttp! });
      ctx.progress(`${query.id}: p95 ${inProcess!.loaded.p95} ms in process, ${overHttp!.loaded.p95} ms over HTTP`);
    }
    return { build, queries: results };
  } finally {
    http.close();
    await api.stop();
  }
}
