/** The fast path that writes a corpus into the database: multi-row INSERTs, every index and trigger in place. */
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { frequencyCounter } from './corpus-queries.ts';
import type { Language } from './corpus-vocabulary.ts';
import { corpusVideoId, REUPLOAD_BLOCK, type Corpus, type VideoRow } from './corpus.ts';

const arrayLiteral = (items: string[]) => `{${items.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

/** One batch as column arrays, for one INSERT … SELECT FROM unnest(…); flags as 't'/'f' text (postgres.js sends a boolean[] parameter wrong). */
function columns(rows: VideoRow[]) {
  const pick = <T>(f: (v: VideoRow) => T) => rows.map(f);
  return {
    id: pick((v) => v.videoId),
    channel: pick((v) => v.channelId),
    title: pick((v) => v.title),
    description: pick((v) => v.description),
    duration: pick((v) => v.durationSeconds),
    views: pick((v) => v.viewCount),
    date: pick((v) => v.uploadDate),
    file: pick((v) => v.videoFileUrl),
    tags: pick((v) => arrayLiteral(v.tags)),
    language: pick((v) => v.language),
    status: pick((v) => v.status),
    reason: pick((v) => v.statusReason),
    reupload: pick((v) => v.reuploadedAs),
    subtitles: pick((v) => (v.hasSubtitles ? 't' : 'f')),
    summary: pick((v) => (v.hasSummary ? 't' : 'f')),
  };
}

export interface BatchOptions {
  /** Videos per batch (rounded to whole blocks of REUPLOAD_BLOCK, so that a re-upload and its original share one). */
  batch?: number;
  /** With a frequency counter, every video's words are counted as it is generated. */
  counter?: ReturnType<typeof frequencyCounter>;
}

export interface WriteOptions extends BatchOptions {
  /** INSERT statements in flight at once (each a connection of the pool). */
  connections?: number;
  /** The videos, when they were generated beforehand (readSpool); else they are generated batch by batch. */
  batches?: AsyncIterable<VideoRow[]>;
  onProgress?: (written: number, total: number) => void;
}

/** The corpus's videos in batches, generated as they are asked for. */
export async function* generatedBatches(corpus: Corpus, { batch = 5_000, counter }: BatchOptions = {}): AsyncGenerator<VideoRow[]> {
  const size = Math.max(1, Math.round(batch / REUPLOAD_BLOCK)) * REUPLOAD_BLOCK;
  const seen = counter ? (id: number) => counter.seen(id) : undefined;
  for (let from = 0; from < corpus.videos; from += size) {
    const rows: VideoRow[] = [];
    for (let index = from; index < Math.min(corpus.videos, from + size); index++) {
      counter?.start(index);
      rows.push(corpus.video(index, seen));
    }
    yield rows;
  }
}

export interface WriteResult {
  videos: number;
  channels: number;
  seconds: number;
  videosPerSecond: number;
  languages: Record<Language, number>;
  statuses: Record<VideoRow['status'], number>;
}

/**
 * Writes the corpus (channels, then videos in batches of one multi-row INSERT each) through every index
 * and trigger of the schema. The videos of a seed are written once: when its first video is already
 * stored, nothing is written and an Error says so.
 */
export async function writeCorpus(sql: Sql, corpus: Corpus, options: WriteOptions = {}): Promise<WriteResult> {
  const connections = options.connections ?? 2;
  const [clash] = await sql<{ videoId: string }[]>`
    select video_id as "videoId" from videos where video_id = any(${[corpusVideoId(corpus.seed, 0), corpusVideoId(corpus.seed, corpus.videos - 1)]}) limit 1`;
  if (clash)
    throw new AppError(
      'INVALID_INPUT',
      `the corpus of seed ${corpus.seed} is already stored (video ${clash.videoId}); generate with another --seed for more videos`,
    );
  const started = performance.now();
  const channelRows = Array.from({ length: corpus.channels }, (_, index) => corpus.channel(index));
  await sql`
    insert into channels (channel_id, title, subscriber_count, country)
    select * from unnest(${channelRows.map((c) => c.channelId)}::text[], ${channelRows.map((c) => c.title)}::text[],
      ${channelRows.map((c) => c.subscriberCount)}::bigint[], ${channelRows.map((c) => c.language.toUpperCase())}::text[])
    on conflict (channel_id) do nothing`;

  const languages: Record<Language, number> = { en: 0, fr: 0, ru: 0, ja: 0 };
  const statuses: Record<VideoRow['status'], number> = { live: 0, deleted: 0, 're-uploaded': 0, checking: 0 };
  // Writers take the next batch in turn (an async generator queues calls to next()).
  const batches = (options.batches ?? generatedBatches(corpus, options))[Symbol.asyncIterator]();
  let written = 0;
  async function writer() {
    for (let next = await batches.next(); !next.done; next = await batches.next()) {
      const rows = next.value;
      for (const row of rows) {
        languages[row.language] += 1;
        statuses[row.status] += 1;
      }
      const c = columns(rows);
      await sql`
        insert into videos (video_id, channel_id, title, description, duration_seconds, view_count, upload_date, thumbnail_url, video_file_url, tags,
          language, status, status_reason, status_source, reuploaded_as, has_subtitles, has_summary, metadata_rank)
        select id, channel, title, description, duration, views, date, 'https://i.ytimg.com/vi/' || id || '/hqdefault.jpg', file, tags::text[],
          language, status, reason, 'youtube_api', reupload, subtitles = 't', summary = 't', 3
        from unnest(${c.id}::text[], ${c.channel}::text[], ${c.title}::text[], ${c.description}::text[], ${c.duration}::int[], ${c.views}::bigint[],
          ${c.date}::date[], ${c.file}::text[], ${c.tags}::text[], ${c.language}::text[], ${c.status}::text[], ${c.reason}::text[],
          ${c.reupload}::text[], ${c.subtitles}::text[], ${c.summary}::text[])
          as x(id, channel, title, description, duration, views, date, file, tags, language, status, reason, reupload, subtitles, summary)`;
      written += rows.length;
      options.onProgress?.(written, corpus.videos);
    }
  }
  await Promise.all(Array.from({ length: connections }, writer));
  const seconds = (performance.now() - started) / 1000;
  return { videos: written, channels: corpus.channels, seconds, videosPerSecond: written / seconds, languages, statuses };
}
