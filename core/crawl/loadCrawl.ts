import type { Queryable } from '../db/database.ts';

export interface Crawl {
  id: string;
  kind: 'full' | 'archive_page';
  status: string;
  archiveCursor: string | null;
  channelId: string;
  channelTitle: string;
}

/** A crawl with its channel's stored title (what the sources are asked with). */
export async function loadCrawl(sql: Queryable, crawlId: string): Promise<Crawl | undefined> {
  const [crawl] = await sql<Crawl[]>`
    select cr.id::text, cr.kind, cr.status, cr.archive_cursor as "archiveCursor", cr.channel_id as "channelId", ch.title as "channelTitle"
    from crawls cr join channels ch on ch.channel_id = cr.channel_id where cr.id = ${crawlId}`;
  return crawl;
}
