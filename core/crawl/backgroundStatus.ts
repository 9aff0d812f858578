import type { Queryable } from '../db/database.ts';

/** Whether a crawl of the channel is running, and the owner's latest session following it (null if none). */
export async function backgroundStatus(
  sql: Queryable,
  channelId: string,
  userId: string | null,
): Promise<{ running: boolean; sessionId: string | null }> {
  const [row] = await sql<{ running: boolean; sessionId: string | null }[]>`
    select exists (select 1 from crawls where channel_id = ${channelId} and status = 'running') as running,
      (select s.id from search_sessions s join crawls cr on cr.id = s.crawl_id
        where s.channel_id = ${channelId} and cr.status = 'running' and s.user_id is not distinct from ${userId}
        order by s.created_at desc limit 1) as "sessionId"`;
  return row!;
}
