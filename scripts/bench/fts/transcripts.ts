/**
 * The transcripts of the subtitle phase (subtitles.ts): generated once into a file, then written into
 * Postgres through the subtitle tables (their triggers index them as in production) and into a SQLite FTS5
 * database of the same words, each build timed on its own.
 */
import { rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Sql } from '../../../core/db/database.ts';
import { tokenize } from '../../../core/fts/query.ts';
import type { Cue } from '../../../core/subtitles/cue.ts';
import { renderText } from '../../../core/subtitles/renderText.ts';
import { contentHash } from '../../../core/subtitles/store.ts';
import { frequencyCounter, wordsBetween } from '../../../test/kit/corpus-queries.ts';
import { readSpool, spoolCorpus } from '../../../test/kit/corpus-spool.ts';
import type { Corpus } from '../../../test/kit/corpus.ts';
import { between, mix32, random } from '../../../test/kit/random.ts';
import { postmasterPid } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { cpuDelta, cpuSnapshot } from '../lib/usage.ts';
import { META_TABLE } from './sqlite.ts';

const TRANSCRIPT_MS = 30 * 60_000;
/** Transcripts per INSERT: about 40 KB of cues each. */
const BATCH = 200;
const CONNECTIONS = 2;
const PHRASE_SAMPLE = 200;
/**
 * Set phrases (drawn once from words the transcripts say often) and the share of English transcripts
 * saying each, one to three times: common ones in thousands of videos at 100,000 transcripts, rare ones in tens.
 */
const SET_PHRASES = [
  { rarity: 'common', length: 2, share: 0.05 },
  { rarity: 'common', length: 2, share: 0.02 },
  { rarity: 'common', length: 3, share: 0.05 },
  { rarity: 'common', length: 3, share: 0.02 },
  { rarity: 'rare', length: 2, share: 0.001 },
  { rarity: 'rare', length: 2, share: 0.0004 },
  { rarity: 'rare', length: 3, share: 0.001 },
  { rarity: 'rare', length: 3, share: 0.0004 },
] as const;

/** A transcript as spooled: what a stored track needs, its cues as JSON text. */
interface SpooledTranscript {
  videoId: string;
  language: string;
  cues: string;
  cueCount: number;
  textBytes: number;
  durationMs: number;
  hash: string;
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
  return SET_PHRASES.map(({ length }) => {
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
    for (const [index, { share }] of SET_PHRASES.entries()) {
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

/**
 * Generates `count` transcripts, spread evenly over the corpus's videos, into `file`; counts their words
 * (for the query mix) and the transcripts saying each set phrase.
 */
export async function spoolTranscripts(corpus: Corpus, count: number, file: string) {
  const step = Math.floor(corpus.videos / count);
  const phrases = setPhrases(corpus, step);
  const counter = frequencyCounter(corpus);
  const saying = phrases.map(() => 0);
  async function* batches(): AsyncGenerator<SpooledTranscript[]> {
    for (let from = 0; from < count; from += BATCH) {
      const rows: SpooledTranscript[] = [];
      for (let n = from; n < Math.min(count, from + BATCH); n++) {
        counter.start(n);
        const { videoId, language, cues, said } = transcript(corpus, phrases, n, step, counter.seen);
        for (const index of said) saying[index]! += 1;
        rows.push({
          videoId,
          language,
          cues: JSON.stringify(cues),
          cueCount: cues.length,
          textBytes: Buffer.byteLength(renderText(cues)),
          durationMs: cues.at(-1)!.endMs,
          hash: contentHash(cues),
        });
      }
      yield rows;
    }
  }
  const spooled = await spoolCorpus(batches(), file);
  return {
    ...spooled,
    phrases: phrases.map((phrase, index) => ({ ...SET_PHRASES[index]!, phrase, videos: saying[index]! })),
    words: counter.table(),
  };
}

/** A batch as stored tracks (json3 from the platform, automatic captions) and the videos' transcripts. */
async function writeBatch(sql: Sql, rows: SpooledTranscript[]) {
  const column = <K extends keyof SpooledTranscript>(key: K) => rows.map((row) => row[key]);
  await sql.begin(async (tx) => {
    await tx`
      insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash)
      select id, language, 'auto', 'youtube', 'json3', 1, cues::json, cue_count, text_bytes, duration_ms, text_bytes * 3, hash
      from unnest(${column('videoId')}::text[], ${column('language')}::text[], ${column('cues')}::text[], ${column('cueCount')}::int[],
        ${column('textBytes')}::int[], ${column('durationMs')}::int[], ${column('hash')}::text[])
        as x(id, language, cues, cue_count, text_bytes, duration_ms, hash)`;
    // A statement of its own: the transcripts trigger reads the tracks to build their windows.
    await tx`
      insert into transcripts (video_id, state, track_id, checked_at)
      select video_id, 'completed', id, now() from subtitle_tracks where video_id = any(${column('videoId')}::text[])`;
  });
}

/**
 * Writes the spooled transcripts (two connections), then flushes the GIN pending lists and analyzes: the time
 * includes every index. The CPU each transcript cost the PostgreSQL server (every process of it, autovacuum
 * too) and this process (reading the spool, sending the batches) says what two cores allow at most.
 */
export async function writeTranscripts(sql: Sql, file: string, count: number, progress: (message: string) => void) {
  const postmaster = await postmasterPid(sql);
  const cpuBefore = cpuSnapshot(postmaster);
  const started = performance.now();
  const spool = readSpool<SpooledTranscript>(file);
  let written = 0;
  async function writer() {
    for (let next = await spool.next(); !next.done; next = await spool.next()) {
      await writeBatch(sql, next.value);
      written += next.value.length;
      if (written % Math.max(BATCH, Math.round(count / 10 / BATCH) * BATCH) === 0)
        progress(`transcripts: ${written.toLocaleString('en')} written`);
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, writer));
  const writeSeconds = (performance.now() - started) / 1000;
  await sql`select gin_clean_pending_list('transcript_windows_fts'::regclass), gin_clean_pending_list('transcript_words_words'::regclass)`;
  await sql`vacuum analyze transcript_windows, transcript_words`;
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuDelta(cpuBefore, cpuSnapshot(postmaster));
  const [size] = await sql<{ windows: number; tracks: number; fts: number; words: number; rows: number }[]>`
    select pg_total_relation_size('transcript_windows')::float8 - pg_relation_size('transcript_windows_fts')::float8 as windows,
      pg_total_relation_size('subtitle_tracks')::float8 as tracks, pg_relation_size('transcript_windows_fts')::float8 as fts,
      pg_total_relation_size('transcript_words')::float8 as words, (select count(*) from transcript_windows)::float8 as rows`;
  return {
    writeSeconds,
    seconds,
    perSecond: count / seconds,
    windows: size!.rows,
    cpuMsPerTranscript: {
      postgres: cpu.postgresUs === null ? null : round(cpu.postgresUs / 1000 / count, 2),
      writer: round(cpu.selfUs / 1000 / count, 2),
    },
    mib: { tracks: size!.tracks / 2 ** 20, windows: size!.windows / 2 ** 20, ftsIndex: size!.fts / 2 ** 20, words: size!.words / 2 ** 20 },
  };
}

/**
 * SQLite FTS5 over the same transcripts: a contentless table with a row per transcript (its cues' words as
 * tokenize() folds them, in order, so a phrase across cues matches), and the videos' filter and sort
 * columns (read from Postgres, which holds them already: not part of either build).
 */
export async function buildTranscriptSqlite(sql: Sql, file: string, spool: string) {
  rmSync(file, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`create virtual table fts using fts5(words, content='', tokenize='unicode61 remove_diacritics 0'); ${META_TABLE}`);
  const videos = await sql<
    Array<{
      videoId: string;
      status: string;
      hasVideo: boolean;
      hasSubtitles: boolean;
      hasSummary: boolean;
      day: string | null;
      duration: number | null;
      views: string | null;
    }>
  >`
    select video_id as "videoId", status, has_video as "hasVideo", has_subtitles as "hasSubtitles", has_summary as "hasSummary",
      to_char(upload_date, 'YYYY-MM-DD') as day, duration_seconds as duration, view_count::text as views
    from videos join transcripts using (video_id) order by video_id`;
  const rowids = new Map(videos.map((video, index) => [video.videoId, index + 1]));
  const insertMeta = db.prepare('insert into meta values (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (const v of videos)
      insertMeta.run(
        rowids.get(v.videoId),
        v.videoId,
        v.status,
        +v.hasVideo,
        +v.hasSubtitles,
        +v.hasSummary,
        v.day,
        v.duration,
        v.views === null ? null : Number(v.views),
      );
  })();
  const started = performance.now();
  const insert = db.prepare('insert into fts (rowid, words) values (?, ?)');
  const batch = db.transaction((rows: SpooledTranscript[]) => {
    for (const row of rows) {
      const cues = JSON.parse(row.cues) as Cue[];
      insert.run(rowids.get(row.videoId), tokenize(cues.map((cue) => cue.text).join('\n')).join(' '));
    }
  });
  for await (const rows of readSpool<SpooledTranscript>(spool)) batch(rows);
  db.exec(`insert into fts (fts) values ('optimize'); pragma wal_checkpoint(truncate);`);
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return { seconds, perSecond: rowids.size / seconds, mib: statSync(file).size / 2 ** 20 };
}
