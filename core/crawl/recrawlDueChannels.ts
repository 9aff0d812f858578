import type { Sql } from '../db/database.ts';
import { startSearch } from './startSearch.ts';

/**
 * Re-crawls every channel whose last full crawl ended more than `everyHours` ago, so new uploads
 * arrive without a search. A channel being crawled is joined, not crawled twice; a channel never
 * crawled (known only from a video) is left to searches. Answers how many channels were due.
 */
export async function recrawlDueChannels(sql: Sql, everyHours: number): Promise<number> {
  const due = await sql<{ channelId: string }[]>`
    select c.channel_id as "channelId" from channels c
    where c.channel_status = 'live'
      and exists (select 1 from crawls cr where cr.channel_id = c.channel_id and cr.kind = 'full')
      and not exists (select 1 from crawls cr where cr.channel_id = c.channel_id and cr.kind = 'full'
        and (cr.status = 'running' or cr.finished_at > now() - make_interval(hours => ${everyHours})))`;
  for (const { channelId } of due) await startSearch(sql, { userId: null, channel: { channelId }, query: channelId, kind: 'full' });
  return due.length;
}
