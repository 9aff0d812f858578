/**
 * The subtitle phase of the full-text benchmark (scripts/bench/fts.ts): 30-minute transcripts of some of
 * the corpus's videos written through the subtitle tables (their triggers index them as in production),
 * then `in=subtitles` searches, a phrase class and a rare-word class, through searchSubtitles and HTTP.
 */
import type { Sql } from '../../../core/db/database.ts';
import type { FtsFilters, FtsSort } from '../../../core/fts/backend.ts';
import { parseQuery } from '../../../core/fts/query.ts';
import { searchSubtitles } from '../../../core/fts/subtitles.ts';
import type { Cue } from '../../../core/subtitles/cue.ts';
import { renderText } from '../../../core/subtitles/renderText.ts';
import { contentHash } from '../../../core/subtitles/store.ts';
import { FILTER_SETS, frequencyCounter, wordsBetween } from '../../../test/kit/corpus-queries.ts';
import type { Corpus } from '../../../test/kit/corpus.ts';
import { between, mix32, random } from '../../../test/kit/random.ts';
import { round } from '../lib/stats.ts';

const TRANSCRIPT_MS = 30 * 60_000;
/** Transcripts per INSERT: about 40 KB of cues each. */
const BATCH = 200;
const CONNECTIONS = 2;
/**
 * Set phrases (drawn once from the English words) and the share of English transcripts saying each, one to
 * three times: from thousands of videos down to tens at 100,000 transcripts.
 */
const PHRASE_SHARES = [0.05, 0.02, 0.008, 0.003, 0.001, 0.0004];
const PHRASE_LENGTHS = [2, 2, 3, 2, 3, 2];
const PHRASE_SAMPLE = 200;
const SUBTITLE_CLASSES = ['phrase', 'rare'] as const;
type SubtitleClass = (typeof SUBTITLE_CLASSES)[number];
const SORTS: FtsSort[] = ['relevance', 'date-desc'];
const PAGE_SIZE = 50;

interface SubtitleRequest {
  q: string;
  filters: FtsFilters;
  sort: FtsSort;
  in: 'subtitles';
}
interface Answer {
  ids: string[];
  total: number;
}
/** An engine of fts.ts: its HTTP one passes `in` along. */
interface Engine {
  id: string;
  search(request: SubtitleRequest): Promise<Answer>;
  close(): Promise<void>;
}
interface Stats {
  p50: number | null;
  p95: number | null;
  p99: number | null;
  qps: number | null;
  errors: number;
}
type EngineId = 'backend' | 'http';

/** What the phase borrows from fts.ts: its HTTP engine and its way of driving and summing up clients. */
interface SubtitleTools<S> {
  http: Engine;
  drive(engine: Engine, requests: SubtitleRequest[], count: number, seconds: number): Promise<S>;
  stats(samples: S[]): Stats;
  requestsPerCell: number;
  /** Warm-up requests per query before a cell is measured (one per pooled connection). */
  warmUpPerQuery: number;
  cellSeconds: number;
  timeoutMs: number;
  progress(message: string): void;
}

/**
 * Set phrases of words the transcripts say often (in 5–95 % of a sample of them, Latin script: the costly
 * kind to check), no word twice in one; the same for a seed.
 */
function setPhrases(corpus: Corpus, step: number): string[] {
  const counter = frequencyCounter(corpus);
  for (let n = 0; n < PHRASE_SAMPLE; n++) {
    counter.start(n);
    transcript(corpus, [], n, step, counter.seen);
  }
  const often = wordsBetween(counter.table(), PHRASE_SAMPLE * 0.05, PHRASE_SAMPLE * 0.95)
    .map((w) => w.word)
    .filter((word) => /^\p{Script=Latin}{2,}$/u.test(word));
  const rnd = random(mix32(corpus.seed, 0x5ab7));
  return PHRASE_LENGTHS.map((length) => {
    const words: string[] = [];
    while (words.length < length) {
      const word = often[Math.floor(rnd() * often.length)]!;
      if (!words.includes(word)) words.push(word);
    }
    return words.join(' ');
  });
}

/**
 * Transcript `n` (of the video at n × step): about 600 cues of 2–4 s, 4 to 11 words each, drawn as the
 * corpus draws its words, in the video's language; English ones may say set phrases.
 */
function transcript(corpus: Corpus, phrases: string[], n: number, step: number, seen: (tokenId: number) => void) {
  const video = corpus.video(n * step);
  const rnd = random(mix32(corpus.seed ^ 0x7a5c, n));
  const cues: Cue[] = [];
  const separator = video.language === 'ja' ? '' : ' ';
  for (let startMs = between(rnd, 0, 3_000); startMs < TRANSCRIPT_MS; ) {
    const endMs = startMs + between(rnd, 2_000, 4_000);
    cues.push({
      startMs,
      endMs,
      text: Array.from({ length: between(rnd, 4, 11) }, () => corpus.word(video.language, rnd, seen)).join(separator),
    });
    startMs = endMs;
  }
  const said: number[] = [];
  if (video.language === 'en') {
    for (const [index, share] of PHRASE_SHARES.entries()) {
      if (rnd() >= share) continue;
      said.push(index);
      for (let times = between(rnd, 1, 3); times > 0; times--) {
        const cue = cues[Math.floor(rnd() * cues.length)]!;
        const words = cue.text.split(' ');
        words.splice(between(rnd, 0, words.length), 0, phrases[index]!);
        cue.text = words.join(' ');
      }
    }
  }
  return { videoId: video.videoId, language: video.language, cues, said };
}

/** Every transcript as a stored track (json3 from the platform, automatic captions) and the video's transcript. */
async function writeBatch(sql: Sql, rows: ReturnType<typeof transcript>[]) {
  const texts = rows.map((row) => JSON.stringify(row.cues));
  const textBytes = rows.map((row) => Buffer.byteLength(renderText(row.cues)));
  await sql.begin(async (tx) => {
    await tx`
      insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash)
      select id, language, 'auto', 'youtube', 'json3', 1, cues::json, cue_count, text_bytes, duration_ms, text_bytes * 3, hash
      from unnest(${rows.map((row) => row.videoId)}::text[], ${rows.map((row) => row.language)}::text[], ${texts}::text[],
        ${rows.map((row) => row.cues.length)}::int[], ${textBytes}::int[], ${rows.map((row) => row.cues.at(-1)!.endMs)}::int[],
        ${rows.map((row) => contentHash(row.cues))}::text[]) as x(id, language, cues, cue_count, text_bytes, duration_ms, hash)`;
    // A statement of its own: the transcripts trigger reads the tracks to index their words.
    await tx`
      insert into transcripts (video_id, state, track_id, checked_at)
      select video_id, 'completed', id, now() from subtitle_tracks where video_id = any(${rows.map((row) => row.videoId)}::text[])`;
  });
}

/**
 * Writes `count` transcripts, spread evenly over the corpus's videos, then flushes the GIN pending list and
 * analyzes: the write time includes every index. Counts the words of the transcripts for the query mix.
 */
async function writeTranscripts(sql: Sql, corpus: Corpus, count: number, progress: (message: string) => void) {
  const step = Math.floor(corpus.videos / count);
  const phrases = setPhrases(corpus, step);
  const counter = frequencyCounter(corpus);
  const saying = phrases.map(() => 0);
  const started = performance.now();
  let next = 0;
  let written = 0;
  async function writer() {
    for (let from = (next += BATCH) - BATCH; from < count; from = (next += BATCH) - BATCH) {
      const rows: ReturnType<typeof transcript>[] = [];
      for (let n = from; n < Math.min(count, from + BATCH); n++) {
        counter.start(n);
        const row = transcript(corpus, phrases, n, step, counter.seen);
        for (const index of row.said) saying[index]! += 1;
        rows.push(row);
      }
      await writeBatch(sql, rows);
      written += rows.length;
      if (written % Math.max(BATCH, Math.round(count / 10 / BATCH) * BATCH) === 0)
        progress(`transcripts: ${written.toLocaleString('en')} written`);
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, writer));
  const writeSeconds = (performance.now() - started) / 1000;
  await sql`select gin_clean_pending_list('transcripts_fts'::regclass)`;
  await sql`vacuum analyze transcripts`;
  const seconds = (performance.now() - started) / 1000;
  const [size] = await sql<{ table: number; tracks: number; fts: number }[]>`
    select pg_total_relation_size('transcripts')::float8 - pg_relation_size('transcripts_fts')::float8 as table,
      pg_total_relation_size('subtitle_tracks')::float8 as tracks, pg_relation_size('transcripts_fts')::float8 as fts`;
  const table = counter.table();
  // Rare: said in at most 0.01 % of the transcripts (at least 3), picked evenly from the list.
  const rareMax = Math.max(3, Math.ceil(count * 1e-4));
  const rare = wordsBetween(table, 1, rareMax).filter((w) => /^\p{L}{3,}$/u.test(w.word));
  const rareWords = Array.from({ length: Math.min(6, rare.length) }, (_, i) => rare[Math.floor((i * rare.length) / 6)]!);
  return {
    transcripts: count,
    step,
    writeSeconds,
    seconds,
    perSecond: count / seconds,
    mib: { tracks: size!.tracks / 2 ** 20, transcripts: size!.table / 2 ** 20, ftsIndex: size!.fts / 2 ** 20 },
    queries: {
      phrase: phrases.map((phrase, index) => ({ q: `"${phrase}"`, videos: saying[index]! })),
      rare: rareWords.map((w) => ({ q: w.word, videos: w.videos })),
    } as Record<SubtitleClass, Array<{ q: string; videos: number }>>,
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

/**
 * The phase: writes the transcripts, then measures each class × without and with filters × relevance and
 * newest first, backend and HTTP taking turns, after comparing their answers.
 */
export async function subtitlePhase<S>(sql: { build: Sql; search: Sql }, corpus: Corpus, count: number, tools: SubtitleTools<S>) {
  const written = await writeTranscripts(sql.build, corpus, count, tools.progress);
  tools.progress(
    `transcripts: ${count.toLocaleString('en')} in ${round(written.seconds, 1)} s (${Math.round(written.perSecond)}/s); queries ${SUBTITLE_CLASSES.map((name) => written.queries[name].map((x) => `${x.q} (${x.videos})`).join(', ')).join('; ')}`,
  );
  const engines = [backendEngine(sql.search, tools.timeoutMs), tools.http];
  const cells = SUBTITLE_CLASSES.flatMap((name) =>
    [false, true].flatMap((filtered) =>
      SORTS.map((sort) => ({
        class: name,
        filtered,
        sort,
        requests: written.queries[name].map(
          ({ q }, i): SubtitleRequest => ({ q, sort, filters: filtered ? FILTER_SETS[i % FILTER_SETS.length]! : {}, in: 'subtitles' }),
        ),
      })),
    ),
  );
  const differences: string[] = [];
  for (const request of cells.flatMap((cell) => cell.requests)) {
    const [backend, http] = await Promise.all(engines.map((engine) => engine.search(request)));
    if (backend!.total !== http!.total || backend!.ids.join() !== http!.ids.join())
      differences.push(`\`${request.q}\` ${request.sort} ${JSON.stringify(request.filters)}`);
  }
  const results: Array<{ class: SubtitleClass; filtered: boolean; sort: FtsSort; engine: string; sample: S }> = [];
  for (const [index, cell] of cells.entries()) {
    for (let turn = 0; turn < engines.length; turn++) {
      const engine = engines[(index + turn) % engines.length]!;
      await tools.drive(engine, cell.requests, cell.requests.length * tools.warmUpPerQuery, tools.cellSeconds);
      results.push({
        class: cell.class,
        filtered: cell.filtered,
        sort: cell.sort,
        engine: engine.id,
        sample: await tools.drive(engine, cell.requests, tools.requestsPerCell, tools.cellSeconds),
      });
    }
    const pick = (id: string) =>
      tools.stats(
        results
          .filter((r) => r.engine === id && r.class === cell.class && r.sort === cell.sort && r.filtered === cell.filtered)
          .map((r) => r.sample),
      );
    tools.progress(
      `subtitles ${index + 1}/${cells.length} ${cell.class} ${cell.filtered ? 'filtered' : 'unfiltered'} ${cell.sort}: ${engines.map((e) => `${e.id} p50 ${pick(e.id).p50} p95 ${pick(e.id).p95}`).join(', ')}`,
    );
  }
  const rows = cells.map((cell) => ({
    class: cell.class,
    filtered: cell.filtered,
    sort: cell.sort,
    ...Object.fromEntries(
      engines.map((e) => [
        e.id,
        tools.stats(
          results
            .filter((r) => r.engine === e.id && r.class === cell.class && r.sort === cell.sort && r.filtered === cell.filtered)
            .map((r) => r.sample),
        ),
      ]),
    ),
  })) as Array<{ class: SubtitleClass; filtered: boolean; sort: FtsSort } & Record<EngineId, Stats>>;
  const byClass = SUBTITLE_CLASSES.map((name) => ({
    class: name,
    backend: tools.stats(results.filter((r) => r.engine === 'backend' && r.class === name).map((r) => r.sample)),
    http: tools.stats(results.filter((r) => r.engine === 'http' && r.class === name).map((r) => r.sample)),
  }));
  const problems = rows.flatMap((row) =>
    (['backend', 'http'] as const)
      .filter((id) => row[id].errors > 0)
      .map((id) => `subtitles ${id} ${row.class} ${row.sort}${row.filtered ? ' filtered' : ''}: ${row[id].errors} errors`),
  );
  return { ...written, differences, rows, byClass, problems };
}
