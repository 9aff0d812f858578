/** How a crawl ends (search:complete with its totals, or search:error), and the totals its steps add up to get there. */
import type { Queryable, Sql } from '../db/database.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { searchEvents, type CrawlTotals } from '../events/searchEvents.ts';
import { enqueue } from '../jobs/enqueue.ts';

type Failure = { code: string; message: string };

/**
 * Ends a crawl with search:complete, its totals, the sources that failed and whether "continue" has
 * more to load (an archive cursor left), or with search:error when it failed or when every source
 * it asked failed (then nothing could be searched at all).
 */
export async function finishCrawl(tx: Queryable, crawl: { id: string; channelId: string }, failed?: Failure): Promise<void> {
  const [current] = await tx<{ totals: CrawlTotals; morePages: boolean }[]>`
    select totals, next_archive_cursor is not null as "morePages" from crawls where id = ${crawl.id}`;
  const totals = current?.totals ?? {};
  const sources = Object.entries(totals.sources ?? {});
  const failedSources = sources
    .flatMap(([source, counts]) => (counts.error ? [{ source, error: counts.error }] : []))
    .sort((a, b) => a.source.localeCompare(b.source));
  const error =
    failed ??
    (sources.length > 0 && failedSources.length === sources.length
      ? {
          code: 'SERVICE_UNAVAILABLE',
          message: `every source failed: ${failedSources.map((failure) => `${failure.source}: ${failure.error}`).join('; ')}`,
          failedSources,
        }
      : undefined);
  await tx`
    update crawls set status = ${error ? 'error' : 'complete'}, finished_at = now(), error = ${error ? JSON.stringify(error) : null}::text::jsonb
    where id = ${crawl.id}`;
  await appendEvents(tx, crawlStream(crawl.id), [
    error
      ? searchEvents.error(error)
      : searchEvents.complete({ channelId: crawl.channelId, totals, failedSources, morePages: current?.morePages ?? false }),
  ]);
  // The words of what the crawl stored join the did-you-mean vocabulary now, not at the crontab's next
  // run, and the saved queries look for it. One job key each: crawls finishing together join the job
  // still queued (a running one is not joined).
  if (sources.some(([, counts]) => counts.changed > 0)) {
    await enqueue(tx, 'refresh_search_words', {}, { jobKey: 'refresh_search_words' });
    await enqueue(tx, 'run_saved_queries', {}, { jobKey: 'run_saved_queries' });
  }
}

/** A step out of attempts: the crawl ends with search:error instead of staying "running" for ever. */
export async function failCrawl(sql: Sql, crawlId: string, error: unknown): Promise<void> {
  await sql.begin(async (tx) => {
    const [crawl] = await tx<{ id: string; channelId: string; status: string }[]>`
      select id::text, channel_id as "channelId", status from crawls where id = ${crawlId} for update`;
    if (crawl?.status === 'running')
      await finishCrawl(tx, crawl, { code: 'INTERNAL_ERROR', message: `the crawl failed: ${(error as Error).message}` });
  });
}

export interface BatchCounts {
  /** Videos the source listed in this step. */
  videos: number;
  /** Of them, stored for the first time. */
  inserted: number;
  /** Of them, stored or changed (sent as search:video). */
  changed: number;
  /** The source failed in this step. */
  failure?: string;
}

/** The crawl's totals with one step's batch of `source` added (an earlier error of the source stays unless replaced). */
export function addBatch(totals: CrawlTotals, source: string, batch: BatchCounts): CrawlTotals {
  const before = totals.sources?.[source];
  return {
    ...totals,
    videos: (totals.videos ?? 0) + batch.videos,
    new: (totals.new ?? 0) + batch.inserted,
    sources: {
      ...totals.sources,
      [source]: {
        ...before,
        videos: (before?.videos ?? 0) + batch.videos,
        changed: (before?.changed ?? 0) + batch.changed,
        ...(batch.failure ? { error: batch.failure } : {}),
      },
    },
  };
}
