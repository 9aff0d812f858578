import type { loadConfig } from '../../../core/config.ts';
import type { Queryable, Sql } from '../../../core/db/database.ts';
import { appendEvents, crawlStream } from '../../../core/events/events.ts';
import { announcesCaptions, captionInfoOf, searchEvents, type SearchEvent } from '../../../core/events/searchEvents.ts';
import { configuredSources } from '../../../core/sources/configured.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../../../core/sources/types.ts';
import { upsertChannel } from '../../../core/videos/upsertChannel.ts';
import { upsertVideos } from '../../../core/videos/upsertVideos.ts';
import type { BenchContext } from '../lib/harness.ts';
import { round } from '../lib/stats.ts';
import { PRODUCTION_BATCH, WHAT_IF_BATCH, type Replay, type SourceKind } from './shape.ts';

/** The source half of the crawl alone: a fresh source like the worker's (the benchmark's archive is ARCHIVE_DIR, no stored roots), every page in turn. */
async function replaySource(kind: SourceKind, config: ReturnType<typeof loadConfig>, channelId: string) {
  const source: VideoSource = configuredSources(config, async () => []).find((candidate) => candidate.name === kind)!;
  const resolveStarted = performance.now();
  const channel: ChannelRecord = (await source.resolveChannel({ kind: 'channelId', channelId })) ?? { channelId };
  const resolveMs = performance.now() - resolveStarted;
  const videos: VideoRecord[] = [];
  let cursor: string | undefined;
  let pages = 0;
  const listStarted = performance.now();
  do {
    const page = await source.listVideos(channel, cursor);
    videos.push(...page.videos);
    cursor = page.next;
    pages++;
  } while (cursor);
  return { channel, videos, resolveMs, listMs: performance.now() - listStarted, pages };
}

/**
 * `tx` with every query it runs timed under the first words of its text (queries run when awaited,
 * which the code under test does at once), so a production function's statements can be told apart.
 */
function timedQueries<T extends Queryable>(tx: T, into: Map<string, number>): T {
  return new Proxy(tx, {
    apply(target, thisArg, args: unknown[]) {
      const query = Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args) as PromiseLike<unknown> & {
        then: PromiseLike<unknown>['then'];
      };
      const strings = args[0];
      if (!Array.isArray(strings) || !('raw' in strings)) return query;
      const label = String(strings[0]).replace(/\s+/g, ' ').trim().split(' ').slice(0, 4).join(' ');
      const started = performance.now();
      const then = query.then.bind(query);
      // Counted once: postgres.js calls then() again itself (Query.catch inside transactions).
      let counted = false;
      // biome-ignore lint/suspicious/noThenProperty: wraps the query's own then() to time it
      query.then = ((resolve, reject) =>
        then((value) => {
          if (!counted) into.set(label, (into.get(label) ?? 0) + performance.now() - started);
          counted = true;
          return resolve ? resolve(value) : value;
        }, reject)) as typeof query.then;
      return query;
    },
  });
}

/** The store half alone: each batch in its own transaction, as a crawl step stores it (without the job hand-off). */
async function replayStore(sql: Sql, kind: SourceKind, channel: ChannelRecord, videos: VideoRecord[], batch: number) {
  await sql`truncate videos, video_sources, events cascade`;
  await upsertChannel(sql, channel);
  const stream = crawlStream(0);
  let upsertMs = 0;
  let eventsMs = 0;
  let commitMs = 0;
  let transactions = 0;
  const statements = new Map<string, number>();
  let payloadBytes = 0;
  let payloads = 0;
  const started = performance.now();
  for (let offset = 0; offset < videos.length; offset += batch) {
    const records = videos.slice(offset, offset + batch);
    let bodyDone = 0;
    await sql.begin(async (tx) => {
      const t0 = performance.now();
      const { changed } = await upsertVideos(timedQueries(tx, statements), kind, records);
      const t1 = performance.now();
      const events: SearchEvent[] = [searchEvents.progress({ stage: kind, percent: 50, videosInBatch: records.length })];
      for (const video of changed) events.push(searchEvents.video(video));
      const withCaptions = changed.filter(announcesCaptions);
      if (withCaptions.length) events.push(captionInfoOf(withCaptions));
      await appendEvents(timedQueries(tx, statements), stream, events);
      bodyDone = performance.now();
      upsertMs += t1 - t0;
      eventsMs += bodyDone - t1;
      if (offset === 0) {
        payloadBytes = changed.reduce((sum, video) => sum + JSON.stringify(video).length, 0);
        payloads = changed.length;
      }
    });
    commitMs += performance.now() - bodyDone;
    transactions++;
  }
  const totalMs = performance.now() - started;
  return {
    result: {
      batch,
      transactions,
      totalMs: round(totalMs, 0)!,
      perTransactionMs: round(totalMs / transactions, 1)!,
      upsertMs: round(upsertMs, 0)!,
      eventsMs: round(eventsMs, 0)!,
      commitMs: round(commitMs, 0)!,
      perVideoUs: round((totalMs * 1000) / videos.length, 0)!,
      statementsMs: Object.fromEntries([...statements].map(([label, ms]) => [label, Math.round(ms)])),
    },
    eventBytes: payloads ? Math.round(payloadBytes / payloads) : 0,
  };
}

export async function replay(
  ctx: BenchContext,
  kind: SourceKind,
  config: ReturnType<typeof loadConfig>,
  channelId: string,
): Promise<Replay> {
  const listed = await replaySource(kind, config, channelId);
  ctx.progress(
    `${kind} replay: resolve ${Math.round(listed.resolveMs)} ms, ${listed.pages} pages in ${Math.round(listed.listMs)} ms (no database)`,
  );
  const db = await ctx.database();
  const sql = db.pool({ max: 2, role: 'bench-replay' });
  const store: Replay['store'] = [];
  let eventBytes = 0;
  for (const batch of [PRODUCTION_BATCH, WHAT_IF_BATCH]) {
    const { result, eventBytes: bytes } = await replayStore(sql, kind, listed.channel, listed.videos, batch);
    eventBytes ||= bytes;
    store.push(result);
    ctx.progress(
      `${kind} replay: store in batches of ${batch}: ${result.totalMs} ms (${result.perTransactionMs} ms a transaction: upsert ${result.upsertMs}, events ${result.eventsMs}, commit ${result.commitMs} ms in all)`,
    );
  }
  return {
    source: kind,
    resolveMs: round(listed.resolveMs, 0)!,
    listMs: round(listed.listMs, 0)!,
    pages: listed.pages,
    videos: listed.videos.length,
    store,
    eventBytes,
  };
}
