/**
 * The subtitle phase of the full-text benchmark: 30-minute transcripts of some of the corpus's videos
 * (transcripts.ts) written into Postgres and into SQLite FTS5, then `in=subtitles` searches of each class
 * × without and with filters × relevance and newest first, through searchSubtitles, over HTTP and in
 * SQLite, taking turns, after comparing their answers.
 */
import { join } from 'node:path';
import type { Sql } from '../../../core/db/database.ts';
import type { FtsSort } from '../../../core/fts/backend.ts';
import { parseQuery } from '../../../core/fts/query.ts';
import { searchSubtitles } from '../../../core/fts/subtitles.ts';
import { FILTER_SETS, wordsBetween } from '../../../test/kit/corpus-queries.ts';
import type { Corpus } from '../../../test/kit/corpus.ts';
import { round } from '../lib/stats.ts';
import { agreement, searches, stats, type Stats } from './sampling.ts';
import { CELL_SECONDS, ENGINES, PAGE_SIZE, POOL_SIZE, REQUESTS_PER_CELL, type BenchRequest, type Engine, type EngineId } from './shape.ts';
import { sqliteEngine } from './sqlite.ts';
import { buildTranscriptSqlite, spoolTranscripts, writeTranscripts } from './transcripts.ts';
import { rmSync } from 'node:fs';

const SUBTITLE_CLASSES = [
  'phrase-2-common',
  'phrase-3-common',
  'phrase-2-rare',
  'phrase-3-rare',
  'rare',
  'common',
  'or',
  'exclusion',
] as const;
type SubtitleClass = (typeof SUBTITLE_CLASSES)[number];
const SORTS: FtsSort[] = ['relevance', 'date-desc'];
/**
 * Common words newest first only: by relevance, a query matching more than 50,000 windows is answered
 * from the first read (api/REFERENCE.md), and its answer is not SQLite's.
 */
const sortsOf = (name: SubtitleClass): FtsSort[] => (name === 'common' ? ['date-desc'] : SORTS);
export const SUBTITLE_TARGET = { backendP95Ms: 100, httpP95Ms: 150, ingestPerSecond: 500 };

/** What the phase borrows from measure.ts: its HTTP engine, the search timeout, where files go, progress. */
interface SubtitleTools {
  http: Engine;
  timeoutMs: number;
  dataDir: string;
  progress(message: string): void;
}

/**
 * The query mix from the transcripts' words: set phrases by length and how many say them; rare words (in
 * at most 0.01 % of transcripts, at least 3); common words (in 5 to 10 % of transcripts, alone, two together
 * and one without another); OR of rare words and phrases; a phrase or rare word without a word said in a
 * fifth to half of the transcripts.
 */
function subtitleQueries(written: Awaited<ReturnType<typeof spoolTranscripts>>, count: number): Record<SubtitleClass, string[]> {
  const phrase = (rarity: 'common' | 'rare', length: number) =>
    written.phrases.filter((p) => p.rarity === rarity && p.length === length).map((p) => `"${p.phrase}"`);
  const evenly = <T>(list: T[], n: number) =>
    Array.from({ length: Math.min(n, list.length) }, (_, i) => list[Math.floor((i * list.length) / n)]!);
  const latinWords = (min: number, max: number) =>
    wordsBetween(written.words, min, max)
      .filter((w) => /^\p{Script=Latin}{3,}$/u.test(w.word))
      .map((w) => w.word);
  const rare = evenly(latinWords(1, Math.max(3, Math.ceil(count * 1e-4))), 9);
  const mid = evenly(latinWords(count * 0.2, count * 0.5), 3);
  const often = evenly(latinWords(count * 0.05, count * 0.1), 5);
  const [common2, common3, rare2] = [phrase('common', 2), phrase('common', 3), phrase('rare', 2)];
  return {
    'phrase-2-common': common2,
    'phrase-3-common': common3,
    'phrase-2-rare': rare2,
    'phrase-3-rare': phrase('rare', 3),
    rare: rare.slice(0, 6),
    common: [often[0]!, `${often[1]} ${often[2]}`, `${often[3]} -${often[4]}`],
    or: [`${rare[6]} OR ${rare[7]}`, `${rare2[0]} OR ${rare[8]}`, `${common2[1]} OR ${rare[0]}`],
    exclusion: [`${common2[0]} -${mid[0]}`, `${common3[1]} -${mid[1]}`, `${rare[1]} -${mid[2]}`],
  };
}

function backendEngine(sql: Sql, timeoutMs: number): Engine {
  return {
    id: 'backend',
    async search(request) {
      const page = await searchSubtitles(
        sql,
        { query: parseQuery(request.q), filters: request.filters, sort: request.sort, offset: 0, limit: PAGE_SIZE },
        timeoutMs,
      );
      return { ids: page.videoIds, total: page.total };
    },
    close: async () => {},
  };
}

/** The phase: builds both engines' indexes from the same transcripts, compares their answers, measures each cell. */
export async function subtitlePhase(sql: { build: Sql; search: Sql }, corpus: Corpus, count: number, tools: SubtitleTools) {
  const spoolFile = join(tools.dataDir, `fts-bench-${process.pid}.transcripts.jsonl`);
  const sqliteFile = join(tools.dataDir, `fts-bench-${process.pid}.transcripts.sqlite`);
  const engines: Engine[] = [];
  try {
    const spooled = await spoolTranscripts(corpus, count, spoolFile);
    tools.progress(
      `transcripts: ${count.toLocaleString('en')} generated in ${round(spooled.seconds, 1)} s (${round(spooled.bytes / 2 ** 20, 0)} MiB spooled)`,
    );
    const postgres = await writeTranscripts(sql.build, spoolFile, count, tools.progress);
    const sqlite = await buildTranscriptSqlite(sql.build, sqliteFile, spoolFile);
    tools.progress(
      `transcripts: Postgres ${round(postgres.seconds, 1)} s (${Math.round(postgres.perSecond)}/s, ${postgres.windows.toLocaleString('en')} windows; PostgreSQL CPU ${postgres.cpuMsPerTranscript.postgres ?? '?'} ms a transcript, this process ${postgres.cpuMsPerTranscript.writer}), SQLite ${round(sqlite.seconds, 1)} s (${Math.round(sqlite.perSecond)}/s)`,
    );
    const queries = subtitleQueries(spooled, count);
    tools.progress(`subtitle queries: ${SUBTITLE_CLASSES.map((name) => `${name}: ${queries[name].join(' | ')}`).join('; ')}`);
    engines.push(backendEngine(sql.search, tools.timeoutMs), tools.http, sqliteEngine(sqliteFile, 'bm25(fts)'));
    const cells = SUBTITLE_CLASSES.flatMap((name) =>
      [false, true].flatMap((filtered) =>
        sortsOf(name).map((sort) => ({
          class: name,
          filtered,
          sort,
          requests: queries[name].map(
            (q, i): BenchRequest => ({ q, sort, filters: filtered ? FILTER_SETS[i % FILTER_SETS.length]! : {}, in: 'subtitles' }),
          ),
        })),
      ),
    );
    const checked = await agreement(
      engines,
      cells.flatMap((cell) => cell.requests),
    );
    tools.progress(`subtitle answers compared with the backend's: ${checked.compared}, differing ${checked.differences.length}`);
    const results: Array<{
      class: SubtitleClass;
      filtered: boolean;
      sort: FtsSort;
      engine: EngineId;
      sample: Awaited<ReturnType<typeof searches>>;
    }> = [];
    const pick = (keep: (r: (typeof results)[number]) => boolean) =>
      Object.fromEntries(
        ENGINES.map((id) => [id, stats(results.filter((r) => r.engine === id && keep(r)).map((r) => r.sample))]),
      ) as Record<EngineId, Stats>;
    const rows = [];
    for (const [index, cell] of cells.entries()) {
      for (let turn = 0; turn < engines.length; turn++) {
        const engine = engines[(index + turn) % engines.length]!;
        await searches(engine, cell.requests, cell.requests.length * POOL_SIZE, CELL_SECONDS);
        const sample = await searches(engine, cell.requests, REQUESTS_PER_CELL, CELL_SECONDS);
        results.push({ class: cell.class, filtered: cell.filtered, sort: cell.sort, engine: engine.id, sample });
      }
      const row = {
        class: cell.class,
        filtered: cell.filtered,
        sort: cell.sort,
        ...pick((r) => r.class === cell.class && r.sort === cell.sort && r.filtered === cell.filtered),
      };
      rows.push(row);
      tools.progress(
        `subtitles ${index + 1}/${cells.length} ${cell.class} ${cell.filtered ? 'filtered' : 'unfiltered'} ${cell.sort}: ${ENGINES.map((id) => `${id} p50 ${row[id].p50} p95 ${row[id].p95}`).join(', ')}`,
      );
    }
    const problems = rows.flatMap((row) =>
      ENGINES.filter((id) => row[id].errors > 0).map(
        (id) => `subtitles ${id} ${row.class} ${row.sort}${row.filtered ? ' filtered' : ''}: ${row[id].errors} errors`,
      ),
    );
    return {
      transcripts: count,
      generatedSeconds: round(spooled.seconds, 1),
      postgres: { ...postgres, seconds: round(postgres.seconds, 1), perSecond: Math.round(postgres.perSecond) },
      sqlite: { ...sqlite, seconds: round(sqlite.seconds, 1), perSecond: Math.round(sqlite.perSecond) },
      setPhrases: spooled.phrases,
      queries,
      agreement: { compared: checked.compared, differences: checked.differences.slice(0, 50) },
      rows,
      byClass: SUBTITLE_CLASSES.map((name) => ({ class: name, ...pick((r) => r.class === name) })),
      problems,
    };
  } finally {
    await Promise.all(engines.filter((engine) => engine.id === 'sqlite').map((engine) => engine.close()));
    for (const file of [spoolFile, sqliteFile, `${sqliteFile}-wal`, `${sqliteFile}-shm`]) rmSync(file, { force: true });
  }
}
