import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { loadConfig } from '../../../core/config.ts';
import { connect } from '../../../core/db/database.ts';
import { SERVICE_SESSION_SETTINGS } from '../../../core/db/openDatabase.ts';
import { FTS_SORTS, type FtsFilters, type FtsSort } from '../../../core/fts/backend.ts';
import { createPostgresBackend, refreshSearchWords } from '../../../core/fts/postgres.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { FILTER_SETS, frequencyCounter, QUERY_CLASSES, queryMix, type QueryClass } from '../../../test/kit/corpus-queries.ts';
import { readSpool, spoolCorpus } from '../../../test/kit/corpus-spool.ts';
import { generatedBatches, writeCorpus } from '../../../test/kit/corpus-write.ts';
import { createCorpus } from '../../../test/kit/corpus.ts';
import type { BenchContext } from '../lib/harness.ts';
import { sourcelessApiEnv, startService } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';
import { subtitlePhase } from './subtitles.ts';
import { backendEngine, explainSearch, httpEngine } from './engines.ts';
import { agreement, cpuPerRequest, oneClient, searches, stats } from './sampling.ts';
import {
  CELL_SECONDS,
  CLIENTS,
  ENGINES,
  INGEST_CONNECTIONS,
  POOL_SIZE,
  REQUESTS_PER_CELL,
  SEED,
  TARGET,
  TRANSCRIPTS,
  VIDEOS,
  type BenchRequest,
  type CellResult,
  type Engine,
} from './shape.ts';
import { buildSqlite, sqliteEngine } from './sqlite.ts';

export async function run(ctx: BenchContext) {
  const problems: string[] = [];
  const db = await ctx.database();
  // The service's session settings, so that the backend call plans as the API's does.
  const sql = db.pool({ max: POOL_SIZE, role: 'bench', connection: SERVICE_SESSION_SETTINGS });
  // Building a million rows takes statements longer than the harness pools' 15 s timeout: none here.
  const buildSql = connect(db.url, { max: INGEST_CONNECTIONS, role: 'bench-build' });
  const config = loadConfig({ DATA_DIR: ctx.dataDir });
  const sqliteFile = join(ctx.dataDir, `fts-bench-${process.pid}.sqlite`);
  const spoolFile = join(ctx.dataDir, `fts-bench-${process.pid}.corpus.jsonl`);
  let api: Awaited<ReturnType<typeof startService>> | undefined;
  const engines: Engine[] = [];
  try {
    // Build: Postgres
    const corpus = createCorpus({ seed: SEED, videos: VIDEOS });
    ctx.progress(
      `corpus of ${VIDEOS.toLocaleString('en')} videos in ${corpus.channels.toLocaleString('en')} channels, words from ${corpus.vocabulary.source === 'built-in' ? 'the built-in list' : `the trending datasets (${corpus.vocabulary.files.join(', ')})`}`,
    );
    const counter = frequencyCounter(corpus);
    // Generated once, beforehand, for both engines: the generator's CPU is not the engines' ingest.
    const spooled = await spoolCorpus(generatedBatches(corpus, { counter }), spoolFile);
    ctx.progress(`corpus generated in ${round(spooled.seconds, 1)} s (${round(spooled.bytes / 2 ** 20, 0)} MiB spooled)`);
    let reported = 0;
    const written = await writeCorpus(buildSql, corpus, {
      connections: INGEST_CONNECTIONS,
      batches: readSpool(spoolFile),
      onProgress: (done, total) => {
        if (done < total && done - reported < total / 10) return;
        reported = done;
        ctx.progress(`ingest: ${done.toLocaleString('en')} videos`);
      },
    });
    const indexStarted = performance.now();
    await buildSql`select gin_clean_pending_list('videos_fts'::regclass)`;
    await buildSql`vacuum videos`;
    const indexSeconds = (performance.now() - indexStarted) / 1000;
    const analyzeStarted = performance.now();
    await buildSql`analyze videos`;
    const analyzeSeconds = (performance.now() - analyzeStarted) / 1000;
    const wordsStarted = performance.now();
    const words = await refreshSearchWords(buildSql);
    const wordsSeconds = (performance.now() - wordsStarted) / 1000;
    const [size] = await sql<{ table: number; fts: number; total: number }[]>`
      select pg_table_size('videos')::float8 as table, pg_relation_size('videos_fts')::float8 as fts, pg_total_relation_size('videos')::float8 as total`;
    const pgBuildSeconds = written.seconds + indexSeconds + analyzeSeconds;
    ctx.progress(
      `Postgres: ingest ${round(written.seconds, 1)} s (${Math.round(written.videosPerSecond)} videos/s), pending list + vacuum ${round(indexSeconds, 1)} s, analyze ${round(analyzeSeconds, 1)} s; did-you-mean words ${round(wordsSeconds, 1)} s`,
    );

    // Build: SQLite
    const sqliteBuild = await buildSqlite(sqliteFile, spoolFile);
    rmSync(spoolFile, { force: true });
    const sqliteBuildSeconds = sqliteBuild.ingestSeconds + sqliteBuild.optimizeSeconds;
    ctx.progress(
      `SQLite: ingest ${round(sqliteBuild.ingestSeconds, 1)} s, optimize ${round(sqliteBuild.optimizeSeconds, 1)} s, ${round(sqliteBuild.bytes / 2 ** 20, 0)} MiB`,
    );

    const mix = queryMix(corpus, counter.table());
    ctx.progress(`query mix: ${QUERY_CLASSES.map((name) => `${name}: ${mix.queries[name].join(' | ')}`).join('; ')}`);

    // Engines
    const user = await createUser(sql, { email: 'fts-bench@example.org', tier: 'pro', isAdmin: false });
    const { key } = await createApiKey(sql, { userId: user.id });
    await updateTier(sql, 'pro', { limits: { ftsQueriesPerMinute: null, requestsPerMinute: null } });
    api = await startService('api', { ...sourcelessApiEnv(ctx.dataDir, db.url, 'fts'), DATABASE_POOL_SIZE: String(POOL_SIZE) });
    engines.push(
      backendEngine(createPostgresBackend({ sql, timeoutMs: config.FTS_TIMEOUT_MS })),
      httpEngine(api.url!, key),
      sqliteEngine(sqliteFile),
    );

    const cells: Array<{ class: QueryClass; filtered: boolean; sort: FtsSort; requests: BenchRequest[] }> = [];
    for (const name of QUERY_CLASSES) {
      for (const filtered of [false, true]) {
        for (const sort of FTS_SORTS) {
          cells.push({
            class: name,
            filtered,
            sort,
            requests: mix.queries[name].map((q, i) => ({ q, sort, filters: filtered ? FILTER_SETS[i % FILTER_SETS.length]! : {} })),
          });
        }
      }
    }
    const checked = await agreement(
      engines,
      cells.flatMap((cell) => cell.requests),
    );
    ctx.progress(
      `answers compared with the backend's: ${checked.compared}, differing ${checked.differences.length}${checked.differences.length ? `, e.g. ${checked.differences.slice(0, 5).join('; ')}` : ''}`,
    );

    const results: CellResult[] = [];
    const apiCpu = cpuPerRequest();
    const measureStarted = performance.now();
    for (const [index, cell] of cells.entries()) {
      // Engines take turns, starting with a different one each cell, so drifts of the machine spread over all.
      for (let turn = 0; turn < engines.length; turn++) {
        const engine = engines[(index + turn) % engines.length]!;
        // Warm-up: each query about once per pooled connection. A connection's first touch of a shared-buffer
        // page is a page fault (about 33 µs per 4 KiB here): a long-running service has paid it long before.
        await searches(engine, cell.requests, cell.requests.length * POOL_SIZE, CELL_SECONDS);
        const cpuBefore = engine.id === 'http' ? cpuOf(api.pid) : undefined;
        const sample = await searches(engine, cell.requests, REQUESTS_PER_CELL, CELL_SECONDS);
        if (cpuBefore !== undefined) apiCpu.add(cell.class, (cpuOf(api.pid) ?? cpuBefore) - cpuBefore, sample.latencies.length);
        results.push({ class: cell.class, filtered: cell.filtered, sort: cell.sort, engine: engine.id, requests: cell.requests, sample });
      }
      const line = ENGINES.map((id) => {
        const s = stats(
          results
            .filter((r) => r.engine === id && r.class === cell.class && r.sort === cell.sort && r.filtered === cell.filtered)
            .map((r) => r.sample),
        );
        return `${id} p50 ${s.p50} p95 ${s.p95}${s.errors ? ` (${s.errors} errors)` : ''}`;
      }).join(', ');
      ctx.progress(`${index + 1}/${cells.length} ${cell.class} ${cell.filtered ? 'filtered' : 'unfiltered'} ${cell.sort}: ${line}`);
    }
    const measureSeconds = (performance.now() - measureStarted) / 1000;
    const single = {} as Record<QueryClass, Awaited<ReturnType<typeof oneClient>> & { apiCpuMsPerRequestAt8: number | null }>;
    for (const name of QUERY_CLASSES) {
      single[name] = {
        ...(await oneClient(
          engines[0]!,
          engines[1]!,
          api.pid,
          cells.filter((cell) => cell.class === name).flatMap((cell) => cell.requests),
        )),
        apiCpuMsPerRequestAt8: apiCpu.msPerRequest(name),
      };
      ctx.progress(
        `one client, ${name}: backend p50 ${single[name].backendP50} ms, HTTP p50 ${single[name].httpP50} ms (adds ${single[name].addedP50} ms); API CPU per request ${single[name].apiCpuMsPerRequest} ms (${single[name].apiCpuMsPerRequestAt8} ms at ${CLIENTS} clients)`,
      );
    }

    const subtitles =
      TRANSCRIPTS > 0
        ? await subtitlePhase({ build: buildSql, search: sql }, corpus, TRANSCRIPTS, {
            http: engines[1]!,
            timeoutMs: config.FTS_TIMEOUT_MS,
            dataDir: ctx.dataDir,
            progress: ctx.progress,
          })
        : null;
    problems.push(...(subtitles?.problems ?? []));

    for (const result of results) {
      if (result.sample.errors)
        problems.push(
          `${result.engine} ${result.class} ${result.sort}${result.filtered ? ' filtered' : ''}: ${result.sample.errors} errors (${[...result.sample.errorMessages].join('; ')})`,
        );
    }

    // Plans of the slowest backend query of every class and sort that missed the p95 target.
    const explained: Array<{ class: QueryClass; sort: FtsSort; q: string; filters: FtsFilters; p95: number | null; plan: string }> = [];
    for (const name of QUERY_CLASSES) {
      for (const sort of FTS_SORTS) {
        const samples = results.filter((r) => r.engine === 'backend' && r.class === name && r.sort === sort);
        const s = stats(samples.map((r) => r.sample));
        if (s.p95 === null || s.p95 <= TARGET.p95Ms) continue;
        const worst = samples.sort((a, b) => b.sample.slowest.ms - a.sample.slowest.ms)[0]!;
        const slowest = worst.requests[worst.sample.slowest.call % worst.requests.length]!;
        const plan = await explainSearch(db.url, config.FTS_TIMEOUT_MS, { q: slowest.q, filters: slowest.filters, sort }).catch(
          (error: Error) => `EXPLAIN failed: ${error.message}`,
        );
        explained.push({ class: name, sort, q: slowest.q, filters: slowest.filters, p95: s.p95, plan });
      }
    }

    return {
      problems,
      corpus,
      mix,
      checked,
      measureSeconds,
      single,
      explained,
      results,
      subtitles,
      build: {
        corpus: { generatedSeconds: round(spooled.seconds, 1)!, spooledMiB: round(spooled.bytes / 2 ** 20, 0)! },
        postgres: {
          ingestSeconds: round(written.seconds, 1)!,
          ingestVideosPerSecond: Math.round(written.videosPerSecond),
          indexSeconds: round(indexSeconds, 1)!,
          analyzeSeconds: round(analyzeSeconds, 1)!,
          buildSeconds: round(pgBuildSeconds, 1)!,
          buildVideosPerSecond: Math.round(VIDEOS / pgBuildSeconds),
          didYouMeanWordsSeconds: round(wordsSeconds, 1)!,
          didYouMeanWords: words.words,
          tableMiB: round(size!.table / 2 ** 20, 0)!,
          ftsIndexMiB: round(size!.fts / 2 ** 20, 0)!,
          totalMiB: round(size!.total / 2 ** 20, 0)!,
          languages: written.languages,
          statuses: written.statuses,
        },
        sqlite: {
          ingestSeconds: round(sqliteBuild.ingestSeconds, 1)!,
          optimizeSeconds: round(sqliteBuild.optimizeSeconds, 1)!,
          buildSeconds: round(sqliteBuildSeconds, 1)!,
          buildVideosPerSecond: Math.round(VIDEOS / sqliteBuildSeconds),
          fileMiB: round(sqliteBuild.bytes / 2 ** 20, 0)!,
        },
      },
    };
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
    await api?.stop();
    await Promise.all([sql.end({ timeout: 5 }), buildSql.end({ timeout: 5 })]);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqliteFile}${suffix}`, { force: true });
    rmSync(spoolFile, { force: true });
  }
}
