import type { Sql } from '../../core/db/database.ts';
import type { TestDatabase } from './db.ts';
import type { Service } from './cli.ts';
import { readStream, type ReceivedEvent } from './sse.ts';

// What the process fault files (test/fault/) read of the services they run and of their database.

/**
 * A POST on a connection of its own (closed after the answer), so the stream a test opens seconds
 * later goes on a fresh one: a kept-alive connection the API closes as fetch reuses it fails that
 * request with ECONNRESET before it reaches the API (a processes run under load did, once).
 */
export const postJson = (url: string, key: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', Connection: 'close' },
    body: JSON.stringify(body),
  });

/** The video ids a search stream delivered, in order (a search:video_batch only announces the search:video events that follow it). */
export const streamedVideoIds = (events: ReceivedEvent[]) =>
  events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId as string);

export async function countOf(
  db: TestDatabase,
  table: 'videos' | 'channels' | 'subtitle_tracks' | 'video_status_history' | 'events',
): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from ${db.sql(table)}`;
  return row!.n;
}

/** The API's address from its 'API listening' log line (a minute: processes started side by side with other files). */
export async function listeningUrl(service: Service): Promise<string> {
  const [line] = await service.waitForStderr(/\{[^\n]*"msg":"API listening"[^\n]*\}/, 60_000);
  return (JSON.parse(line) as { url: string }).url;
}

/**
 * How long a crawl killed part-way may take to end: not a speed target (a cluster restarts in 2–4 s on
 * an idle machine, 15 on a loaded one, and every step after it takes its turn), only the point past
 * which it is taken not to end at all.
 */
const CRAWL_END_BOUND_MS = 180_000;

/** The latest crawl as its row and its queued steps say, for a failure message: how far it got and what waits. */
export async function latestCrawl(sql: Sql): Promise<unknown> {
  const [crawl] = await sql`
    select id, status, queued_step as "queuedStep", totals, (select count(*)::int from videos) as "videosStored",
      (select json_agg(json_build_object('payload', payload, 'attempts', attempts, 'runAt', run_at, 'lockedBy', locked_by, 'lastError', last_error))
         from graphile_worker.jobs where task_identifier = 'crawl_channel') as "crawlJobs"
    from crawls order by started_at desc limit 1`;
  return crawl;
}

/**
 * A search stream read until its final event; the events, the last of them search:complete. Anything
 * else fails saying what the stream ended with and where the crawl stands (`crawlNow`, latestCrawl say).
 */
export async function searchStreamToEnd(url: string, key: string, crawlNow: () => Promise<unknown>): Promise<ReceivedEvent[]> {
  const { events } = await readStream(url, {
    key,
    timeoutMs: CRAWL_END_BOUND_MS,
    until: (event) => event.event === 'search:complete' || event.event === 'search:error',
  });
  const last = events.at(-1);
  if (last?.event === 'search:complete') return events;
  const crawl = await crawlNow().catch((error: unknown) => `unreadable: ${(error as Error).message}`);
  throw new Error(
    `the search stream ended without search:complete after ${events.length} events (last: ${last ? `${last.event} ${JSON.stringify(last.data)}` : 'none'}); the crawl: ${JSON.stringify(crawl)}`,
  );
}
