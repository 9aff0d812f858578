import type { Sql } from '../db/database.ts';
import { startSearch } from './startSearch.ts';

export interface RecrawlIntervals {
  /** Channels nobody watches: RECRAWL_HOURS. */
  everyHours: number;
  /** Channels a watchlist item watches: WATCH_RECRAWL_HOURS. */
  watchedEveryHours: number;
}

/**
 * Re-crawls every channel whose last full crawl ended longer ago than its interval, so new uploads
 * arrive without a search: a watched channel's (watchedEveryHours) or another's (everyHours). A
 * channel is due once however many watchlists watch it, and a channel being crawled is joined, not
 * crawled twice. A channel never crawled (known only from a video) is left to searches unless it is
 * watched: one watched before its first crawl is crawled now. Answers how many channels were due.
 */
export async function recrawlDueChannels(sql: Sql, intervals: RecrawlIntervals): Promise<number> {
  const due = await sql<{ channelId: string }[]>`
    with watched as (select distinct channel_id from watchlist_items where channel_id is not null),
    candidates as (
      select w.channel_id, true as watched from watched w
      union all
      select c.channel_id, false from channels c
      where not exists (select 1 from watched w where w.channel_id = c.channel_id)
        and exists (select 1 from crawls cr where cr.channel_id = c.channel_id and cr.kind = 'full')
    )
    select k.channel_id as "channelId" from candidates k left join channels c on c.channel_id = k.channel_id
    where coalesce(c.channel_status, 'live') = 'live'
      and not exists (select 1 from crawls cr where cr.channel_id = k.channel_id and cr.kind = 'full'
        and (cr.status = 'running'
          or cr.finished_at > now() - make_interval(hours => case when k.watched then ${intervals.watchedEveryHours}::int else ${intervals.everyHours}::int end)))`;
  for (const { channelId } of due) await startSearch(sql, { userId: null, channel: { channelId }, query: channelId, kind: 'full' });
  return due.length;
}
