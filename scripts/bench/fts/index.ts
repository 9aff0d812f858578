/**
 * Full-text search over a generated archive (test/kit/corpus.ts, FTS_BENCH_VIDEOS videos, default
 * 1,000,000): build time of the Postgres index (ingest through every index, then the GIN pending list
 * flushed and ANALYZE), then a fixed query mix (each class × with and without filters × each sort) at
 * CLIENTS concurrent clients against three engines side by side, cell by cell, taking turns:
 *   backend  SearchBackend.search of createPostgresBackend, in this process
 *   http     GET /api/fts against `afterimage api` in its own process, with a key
 *   sqlite   SQLite FTS5 (better-sqlite3, one worker thread per client) over the same corpus, same filters
 *            and sorts, built here (its ingest time reported too)
 * Every engine answers at the same boundary: a query in, a page of ids and a total out.
 */
import { FTS_SORTS } from '../../../core/fts/backend.ts';
import { QUERY_CLASSES, type QueryClass } from '../../../test/kit/corpus-queries.ts';
import { type Benchmark, target, type Target } from '../lib/harness.ts';
import { round } from '../lib/stats.ts';
import { SUBTITLE_TARGET, type subtitlePhase } from './subtitles.ts';
import { run } from './measure.ts';
import { stats, type Stats } from './sampling.ts';
import {
  CELL_SECONDS,
  CLIENTS,
  ENGINES,
  EXACT_TOTAL_CAP,
  INGEST_CONNECTIONS,
  PAGE_SIZE,
  POOL_SIZE,
  REQUESTS_PER_CELL,
  SEED,
  TARGET,
  TRANSCRIPTS,
  VIDEOS,
  type CellResult,
  type EngineId,
} from './shape.ts';

function summarise(outcome: Awaited<ReturnType<typeof run>>) {
  const { results, single } = outcome;
  const pick = (filter: (r: CellResult) => boolean) =>
    Object.fromEntries(
      ENGINES.map((id) => [id, stats(results.filter((r) => r.engine === id && filter(r)).map((r) => r.sample))]),
    ) as Record<EngineId, Stats>;

  const byClass = Object.fromEntries(QUERY_CLASSES.map((name) => [name, pick((r) => r.class === name)])) as Record<
    QueryClass,
    Record<EngineId, Stats>
  >;
  const overall = pick(() => true);
  const byClassSort = QUERY_CLASSES.flatMap((name) =>
    FTS_SORTS.map((sort) => ({ class: name, sort, stats: pick((r) => r.class === name && r.sort === sort) })),
  );
  const byFilter = QUERY_CLASSES.flatMap((name) =>
    [false, true].map((filtered) => ({ class: name, filtered, stats: pick((r) => r.class === name && r.filtered === filtered) })),
  );

  return { byClass, overall, byClassSort, byFilter, oneClient: single };
}

/** The user-facing figures are the HTTP ones; the backend's are held to the same bounds beside them. */
function ftsTargets(summary: ReturnType<typeof summarise>, build: Awaited<ReturnType<typeof run>>['build']): Target[] {
  const { byClass, overall, byClassSort } = summary;
  const worst = (engine: EngineId, pick: (s: Stats) => number | null) =>
    Math.max(...byClassSort.map((cell) => pick(cell.stats[engine]) ?? Number.POSITIVE_INFINITY));
  const commonRelevance = byClassSort.find((cell) => cell.class === 'common' && cell.sort === 'relevance')!.stats;
  const added = overall.http.p50 === null || overall.backend.p50 === null ? null : round(overall.http.p50 - overall.backend.p50, 1);
  return [
    target(
      'backend p95, worst class and sort (ms)',
      worst('backend', (s) => s.p95),
      { atMost: TARGET.p95Ms },
    ),
    target(
      'HTTP p95, worst class and sort (ms)',
      worst('http', (s) => s.p95),
      { atMost: TARGET.p95Ms },
    ),
    target('HTTP p95, very common words under relevance (ms)', commonRelevance.http.p95, { atMost: TARGET.p95Ms }),
    target('HTTP p50, overall (ms)', overall.http.p50, { atMost: TARGET.p50Ms }),
    ...QUERY_CLASSES.map((name) => target(`HTTP p50, ${name} (ms)`, byClass[name].http.p50, { atMost: TARGET.p50Ms })),
    ...QUERY_CLASSES.map((name) =>
      target(
        `backend p95 over SQLite's, ${name} (ms)`,
        round((byClass[name].backend.p95 ?? Infinity) - (byClass[name].sqlite.p95 ?? 0), 1),
        {
          atMost: 0,
        },
      ),
    ),
    target(`HTTP p50 over the backend's, ${CLIENTS} clients (ms)`, added, { atMost: TARGET.httpAddsP50Ms }),
    target('build (ingest + indexing), videos per second', build.postgres.buildVideosPerSecond, { atLeast: TARGET.ingestPerSecond }),
  ];
}

/** The subtitle phase's targets (issue 32.1): p95 in every class, beside SQLite's, and the ingest rate. */
function subtitleTargets(outcome: Awaited<ReturnType<typeof subtitlePhase>>): Target[] {
  const worst = (id: 'backend' | 'http') => Math.max(...outcome.rows.map((row) => row[id].p95 ?? Infinity));
  const finite = (value: number) => (Number.isFinite(value) ? value : null);
  return [
    target('subtitle search backend p95, worst class, filter and sort (ms)', finite(worst('backend')), {
      atMost: SUBTITLE_TARGET.backendP95Ms,
    }),
    target('subtitle search HTTP p95, worst class, filter and sort (ms)', finite(worst('http')), { atMost: SUBTITLE_TARGET.httpP95Ms }),
    ...outcome.byClass.map((row) =>
      target(
        `subtitle search backend p95 over SQLite's, ${row.class} (ms)`,
        round((row.backend.p95 ?? Infinity) - (row.sqlite.p95 ?? 0), 1),
        {
          atMost: 0,
        },
      ),
    ),
    target('subtitle ingest, transcripts per second', outcome.postgres.perSecond, { atLeast: SUBTITLE_TARGET.ingestPerSecond }),
    target("subtitle ingest over SQLite's build, transcripts per second", outcome.postgres.perSecond - outcome.sqlite.perSecond, {
      atLeast: 0,
    }),
    target('subtitle answers differing from SQLite or HTTP', outcome.agreement.differences.length, { atMost: 0 }),
  ];
}

export const benchmark: Benchmark = {
  name: 'fts',
  title: `Full-text search over ${VIDEOS.toLocaleString('en')} videos: Postgres backend, HTTP and SQLite FTS5`,
  description:
    `A generated archive (test/kit/corpus.ts, seed ${SEED}: English, French and Russian words from real trending-video metadata with Zipf-like frequencies, a few Japanese titles) is generated once into a file (its time reported apart: generating costs about 40 µs a video, on the cores the engines use), then written from that file into a fresh database through every index (\`afterimage bench generate\`'s statements), the GIN pending list is flushed and the table analyzed; SQLite is built from the same file. ` +
    `Then, for each query class (rare words, very common words, phrases, OR, exclusions) × without and with filters × each of the 5 sorts, ${REQUESTS_PER_CELL} requests (or ${CELL_SECONDS} s) at ${CLIENTS} concurrent clients go to three engines in turn: ` +
    `SearchBackend.search (createPostgresBackend, in this process), GET /api/fts (\`afterimage api\` in its own process, a Pro key with the FTS quota lifted), and SQLite FTS5 (better-sqlite3, contentless table of the same folded title/tags/description tokens, bm25 weights 10/5/1, filters on a companion table, one worker thread per client). Page size ${PAGE_SIZE}; totals exact up to ${EXACT_TOTAL_CAP.toLocaleString('en')} in every engine. ` +
    `Then each class's requests go once more to the backend and over HTTP with one client, to measure what the HTTP request adds without contention and the API process's CPU time per request. ` +
    `Targets: p95 ≤ ${TARGET.p95Ms} ms in every class (very common words under relevance included), p50 ≤ ${TARGET.p50Ms} ms, p95 no slower than SQLite, HTTP adding ≤ ${TARGET.httpAddsP50Ms} ms p50, build ≥ ${TARGET.ingestPerSecond.toLocaleString('en')} videos/s.` +
    (TRANSCRIPTS > 0
      ? ` Then ${TRANSCRIPTS.toLocaleString('en')} 30-minute transcripts are generated into a file, written into Postgres (subtitle tracks and transcripts; the trigger builds the cue windows) and into SQLite FTS5 (a row per transcript), each build timed; in=subtitles queries (phrases of 2 and 3 words said in many or few transcripts, rare words, words said in 5–10 % of them (newest first only), OR, exclusions) × without and with filters × relevance and newest first go to searchSubtitles, HTTP and SQLite in turn, after their answers are compared. Targets: p95 ≤ ${SUBTITLE_TARGET.backendP95Ms} ms in the backend and ≤ ${SUBTITLE_TARGET.httpP95Ms} ms over HTTP, no slower than SQLite at p95 in any class, ingest ≥ ${SUBTITLE_TARGET.ingestPerSecond}/s and no slower than SQLite's build.`
      : ''),
  async run(ctx) {
    const outcome = await run(ctx);
    const summary = summarise(outcome);
    const { build, checked, subtitles, mix } = outcome;
    const targets = ftsTargets(summary, build);
    if (subtitles) targets.push(...subtitleTargets(subtitles));
    return {
      parameters: {
        videos: VIDEOS,
        transcripts: TRANSCRIPTS,
        seed: SEED,
        clients: CLIENTS,
        pageSize: PAGE_SIZE,
        requestsPerCell: REQUESTS_PER_CELL,
        cellSecondsCap: CELL_SECONDS,
        ingestConnections: INGEST_CONNECTIONS,
        poolSize: POOL_SIZE,
        exactTotalCap: EXACT_TOTAL_CAP,
        targets: TARGET,
      },
      results: {
        build,
        queryMix: mix,
        ...summary,
        agreement: { compared: checked.compared, differences: checked.differences.slice(0, 50) },
        explained: outcome.explained,
        subtitles,
      },
      targets,
      ok: outcome.problems.length === 0,
      problems: outcome.problems,
    };
  },
};
