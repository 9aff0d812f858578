import type { Queryable } from '../db/database.ts';
import { crawlStream } from '../events/events.ts';
import { searchEvents } from '../events/searchEvents.ts';

export interface CrawlProgress {
  status: string;
  channelId: string;
  steps: number;
  videos: number;
}

/** How far a crawl is: its status, the steps it has taken (a retry's progress is not one), and the videos its channel has stored so far. */
export async function crawlProgress(sql: Queryable, crawlId: string): Promise<CrawlProgress | undefined> {
  const [crawl] = await sql<CrawlProgress[]>`
    select cr.status, cr.channel_id as "channelId",
      (select count(*) from events e where e.stream = ${crawlStream(crawlId)} and e.type = ${searchEvents.progress.type} and not (e.payload ? 'retry'))::int as steps,
      (select count(*) from videos v where v.channel_id = cr.channel_id)::int as videos
    from crawls cr where cr.id = ${crawlId}`;
  return crawl;
}
