/**
 * Full-text search over a generated archive (test/kit/corpus.ts): the Postgres build (ingest through every
 * index, the GIN pending list flushed, ANALYZE) and SQLite FTS5's from the same spooled corpus, then each
 * query class × without and with filters × each sort at CLIENTS clients against the three engines of
 * engines.ts, taking turns cell by cell so that drifts of the machine spread over all.
 * Knobs: FTS_BENCH_VIDEOS, FTS_BENCH_REQUESTS and FTS_BENCH_CELL_SECONDS (a cell and engine's requests, or time).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { loadConfig } from '../../../core/config.ts';
import { connect } from '../../../core/db/database.ts';
import { SERVICE_SESSION_SETTINGS } from '../../../core/db/openDatabase.ts';
import { FTS_SORTS, type FtsSort } from '../../../core/fts/backend.ts';
import { createPostgresBackend } from '../../../core/fts/postgres.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { FILTER_SETS, frequencyCounter, QUERY_CLASSES, type QueryClass, queryMix } from '../../../test/kit/corpus-queries.ts';
import { readSpool, spoolCorpus } from '../../../test/kit/corpus-spool.ts';
import { generatedBatches, writeCorpus } from '../../../test/kit/corpus-write.ts';
import { createCorpus } from '../../../test/kit/corpus.ts';
import { type BenchContext, type Benchmark, target } from '../lib/harness.ts';
import { numberKnob } from '../lib/knobs.ts';
import { drive, requestStats, type Sample } from '../lib/load.ts';
import { sourcelessApiEnv, startService } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';
import { backendEngine, type BenchRequest, buildSqlite, CLIENTS, type Engine, httpEngine, PAGE_SIZE, sqliteEngine } from './engines.ts';

const VIDEOS = numberKnob('FTS_BENCH_VIDEOS', 1_000_000);
const REQUESTS_PER_CELL = numberKnob('FTS_BENCH_REQUESTS', 240);
const CELL_SECONDS = numberKnob('FTS_BENCH_CELL_SECONDS', 20);
const SEED = 1;
const INGEST_CONNECTIONS = 2;
const POOL_SIZE = 10; // DATABASE_POOL_SIZE's default, as the API process uses
const TARGET = { p95Ms: 50, p50Ms: 10, httpAddsP50Ms: 5, buildPerSecond: 5_000 };
const ENGINES = ['backend', 'http', 'sqlite'] as const;

interface Cell {
  class: QueryClass;
  filtered: boolean;
  sort: FtsSort;
  requests: BenchRequest[];
  samples: Partial<Record<Engine['id'], Sample>>;
}

/** Writes the spooled corpus through every index, then flushes the GIN pending list and analyzes: the build's time. */
async function buildPostgres(ctx: BenchContext, url: string, corpus: ReturnType<typeof createCorpus>, spool: string) {
  // Building a million rows takes statements longer than the harness pools' 15 s timeout: none here.
  const sql = connect(url, { max: INGEST_CONNECTIONS, role: 'bench-build' });
  try {
    const onProgress = (done: number) => done % 100_000 === 0 && ctx.progress(`ingest: ${done} videos`);
    const written = await writeCorpus(sql, corpus, { connections: INGEST_CONNECTIONS, batches: readSpool(spool), onProgress });
    const indexStarted = performance.now();
    await sql`select gin_clean_pending_list('videos_fts'::regclass)`;
    await sql`vacuum analyze videos`;
    const seconds = written.seconds + (performance.now() - indexStarted) / 1000;
    const [size] = await sql<{ table: number; fts: number }[]>`
      select pg_table_size('videos')::float8 / 2 ^ 20 as table, pg_relation_size('videos_fts')::float8 / 2 ^ 20 as fts`;
    return {
      ingestSeconds: round(written.seconds, 1),
      seconds: round(seconds, 1),
      videosPerSecond: Math.round(VIDEOS / seconds),
      tableMiB: Math.round(size!.table),
      ftsIndexMiB: Math.round(size!.fts),
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Each cell's requests to each engine in turn, after a warm-up; the API process's CPU per HTTP request, ms. */
async function measure(ctx: BenchContext, engines: Engine[], cells: Cell[], apiPid: number) {
  let apiCpuUs = 0;
  let httpRequests = 0;
  for (const [index, cell] of cells.entries()) {
    for (let turn = 0; turn < engines.length; turn++) {
      const engine = engines[(index + turn) % engines.length]!;
      const search = (i: number) => engine.search(cell.requests[i % cell.requests.length]!);
      // Each query about once per pooled connection: a connection's first touch of a shared-buffer page is a
      // page fault, which a long-running service has paid long before.
      await drive(search, { clients: CLIENTS, seconds: CELL_SECONDS, count: cell.requests.length * POOL_SIZE });
      const cpuBefore = cpuOf(apiPid) ?? 0;
      const sample = await drive(search, { clients: CLIENTS, seconds: CELL_SECONDS, count: REQUESTS_PER_CELL });
      if (engine.id === 'http')
        [apiCpuUs, httpRequests] = [apiCpuUs + (cpuOf(apiPid) ?? 0) - cpuBefore, httpRequests + sample.latencies.length];
      cell.samples[engine.id] = sample;
    }
    const line = ENGINES.map((id) => `${id} p95 ${requestStats([cell.samples[id]!], 1).p95}`).join(', ');
    ctx.progress(`${index + 1}/${cells.length} ${cell.class} ${cell.sort}${cell.filtered ? ' filtered' : ''}: ${line}`);
  }
  return round(apiCpuUs / 1000 / httpRequests, 2);
}

/** Each engine's latencies over the cells `keep` keeps. */
function statsOf(cells: Cell[], keep: (cell: Cell) => boolean = () => true) {
  const stats = (id: Engine['id']) =>
    requestStats(
      cells.filter(keep).map((cell) => cell.samples[id]!),
      1,
    );
  return { backend: stats('backend'), http: stats('http'), sqlite: stats('sqlite') };
}

export const benchmark: Benchmark = {
  name: 'fts',
  title: `Full-text search over ${VIDEOS.toLocaleString('en')} videos: Postgres backend, HTTP and SQLite FTS5`,
  description:
    `A generated archive (test/kit/corpus.ts, seed ${SEED}: words of real trending-video metadata with Zipf-like frequencies) is spooled to a file once, then written into a fresh database through every index (the GIN pending list flushed, analyzed) and into SQLite FTS5, each build timed. ` +
    `Then each query class (rare words, very common words, phrases, OR, exclusions) × without and with filters × each sort: ${REQUESTS_PER_CELL} requests (or ${CELL_SECONDS} s) at ${CLIENTS} clients to each engine in turn: ` +
    `SearchBackend.search in this process, GET /api/fts (\`afterimage api\` in its own process) and SQLite FTS5 (bm25 weights 10/5/1, one worker thread per client); page size ${PAGE_SIZE}. ` +
    `Targets: p95 ≤ ${TARGET.p95Ms} ms in every class and sort, p50 ≤ ${TARGET.p50Ms} ms, p95 no slower than SQLite, HTTP adding ≤ ${TARGET.httpAddsP50Ms} ms p50, build ≥ ${TARGET.buildPerSecond.toLocaleString('en')} videos/s.`,
  async run(ctx) {
    const db = await ctx.database();
    // The service's session settings, so that the backend plans as the API's does.
    const sql = db.pool({ max: POOL_SIZE, role: 'bench', connection: SERVICE_SESSION_SETTINGS });
    const sqliteFile = join(ctx.dataDir, `fts-bench-${process.pid}.sqlite`);
    const spoolFile = join(ctx.dataDir, `fts-bench-${process.pid}.corpus.jsonl`);
    const engines: Engine[] = [];
    let api: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      const corpus = createCorpus({ seed: SEED, videos: VIDEOS });
      const counter = frequencyCounter(corpus);
      // Generated beforehand, for both engines: the generator's CPU is not their ingest.
      const spooled = await spoolCorpus(generatedBatches(corpus, { counter }), spoolFile);
      ctx.progress(`corpus of ${VIDEOS} videos generated in ${round(spooled.seconds, 1)} s`);
      const postgres = await buildPostgres(ctx, db.url, corpus, spoolFile);
      const sqlite = await buildSqlite(sqliteFile, spoolFile);
      ctx.progress(`built: Postgres ${postgres.seconds} s, SQLite ${sqlite.seconds} s`);
      const mix = queryMix(corpus, counter.table());

      const user = await createUser(sql, { email: 'fts-bench@example.org', tier: 'pro', isAdmin: false });
      const { key } = await createApiKey(sql, { userId: user.id });
      await updateTier(sql, 'pro', { limits: { ftsQueriesPerMinute: null, requestsPerMinute: null } });
      api = await startService('api', { ...sourcelessApiEnv(ctx.dataDir, db.url, 'fts'), DATABASE_POOL_SIZE: String(POOL_SIZE) });
      const timeoutMs = loadConfig({ DATA_DIR: ctx.dataDir }).FTS_TIMEOUT_MS;
      engines.push(backendEngine(createPostgresBackend({ sql, timeoutMs })), httpEngine(api.url!, key), sqliteEngine(sqliteFile));

      const filters = (filtered: boolean, i: number) => (filtered ? FILTER_SETS[i % FILTER_SETS.length]! : {});
      const cells: Cell[] = QUERY_CLASSES.flatMap((name) =>
        [false, true].flatMap((filtered) =>
          FTS_SORTS.map((sort) => {
            const requests = mix.queries[name].map((q, i) => ({ q, sort, filters: filters(filtered, i) }));
            return { class: name, filtered, sort, requests, samples: {} };
          }),
        ),
      );
      const apiCpuMsPerRequest = await measure(ctx, engines, cells, api.pid);

      const byClass = Object.fromEntries(QUERY_CLASSES.map((name) => [name, statsOf(cells, (cell) => cell.class === name)]));
      const byClassSort = QUERY_CLASSES.flatMap((name) =>
        FTS_SORTS.map((sort) => ({ class: name, sort, ...statsOf(cells, (cell) => cell.class === name && cell.sort === sort) })),
      );
      const overall = statsOf(cells);
      const worstP95 = (id: Engine['id']) => Math.max(...byClassSort.map((cell) => cell[id].p95 ?? Number.POSITIVE_INFINITY));
      const p50 = (id: Engine['id']) => overall[id].p50 ?? Number.NaN;
      const problems = cells.flatMap((cell) =>
        Object.entries(cell.samples)
          .filter(([, sample]) => sample.errors)
          .map(([id, sample]) => `${id} ${cell.class} ${cell.sort}: ${sample.errors} errors (${[...sample.errorMessages].join('; ')})`),
      );
      const httpAdds = round(p50('http') - p50('backend'), 1);
      return {
        parameters: { videos: VIDEOS, seed: SEED, clients: CLIENTS, requestsPerCell: REQUESTS_PER_CELL, poolSize: POOL_SIZE },
        results: {
          build: { generatedSeconds: round(spooled.seconds, 1), postgres, sqlite },
          queries: mix.queries,
          overall,
          byClass,
          byClassSort,
          apiCpuMsPerRequest,
        },
        targets: [
          target('backend p95, worst class and sort (ms)', worstP95('backend'), { atMost: TARGET.p95Ms }),
          target('HTTP p95, worst class and sort (ms)', worstP95('http'), { atMost: TARGET.p95Ms }),
          target('HTTP p50, overall (ms)', p50('http'), { atMost: TARGET.p50Ms }),
          ...QUERY_CLASSES.map((name) => {
            const over = (byClass[name]!.backend.p95 ?? Number.NaN) - (byClass[name]!.sqlite.p95 ?? Number.NaN);
            return target(`backend p95 over SQLite's, ${name} (ms)`, round(over, 1), { atMost: 0 });
          }),
          target(`HTTP p50 over the backend's, ${CLIENTS} clients (ms)`, httpAdds, { atMost: TARGET.httpAddsP50Ms }),
          target('build (ingest + indexing), videos per second', postgres.videosPerSecond, { atLeast: TARGET.buildPerSecond }),
        ],
        ok: problems.length === 0,
        problems,
      };
    } finally {
      await Promise.all(engines.map((engine) => engine.close()));
      await api?.stop();
      await sql.end({ timeout: 5 });
      for (const file of [spoolFile, sqliteFile, `${sqliteFile}-wal`, `${sqliteFile}-shm`]) rmSync(file, { force: true });
    }
  },
};
