import type { Queryable, Sql } from '../db/database.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { searchEvents, type CrawlTotals } from '../events/searchEvents.ts';

type Failure = { code: string; message: string };

/**
 * Ends a crawl with search:complete and its totals, or with search:error when it failed or when
 * every source it asked failed (then nothing could be searched at all).
 */
export async function finishCrawl(tx: Queryable, crawl: { id: string; channelId: string }, failed?: Failure): Promise<void> {
  const [current] = await tx<{ totals: CrawlTotals }[]>`select totals from crawls where id = ${crawl.id}`;
  const totals = current?.totals ?? {};
  const sources = Object.entries(totals.sources ?? {});
  const error =
    failed ??
    (sources.length > 0 && sources.every(([, counts]) => counts.error)
      ? { code: 'SERVICE_UNAVAILABLE', message: `every source failed: ${sources.map(([name, counts]) => `${name}: ${counts.error}`).join('; ')}` }
      : undefined);
  await tx`
    update crawls set status = ${error ? 'error' : 'complete'}, finished_at = now(), error = ${error ? JSON.stringify(error) : null}::text::jsonb
    where id = ${crawl.id}`;
  await appendEvents(tx, crawlStream(crawl.id), [error ? searchEvents.error(error) : searchEvents.complete({ channelId: crawl.channelId, totals })]);
}

/** A step out of attempts: the crawl ends with search:error instead of staying "running" for ever. */
export async function failCrawl(sql: Sql, crawlId: string, error: unknown): Promise<void> {
  await sql.begin(async (tx) => {
    const [crawl] = await tx<{ id: string; channelId: string; status: string }[]>`
      select id::text, channel_id as "channelId", status from crawls where id = ${crawlId} for update`;
    if (crawl?.status === 'running') await finishCrawl(tx, crawl, { code: 'INTERNAL_ERROR', message: `the crawl failed: ${(error as Error).message}` });
  });
}
