import type { Queryable } from '../db/database.ts';
import { CHANNEL_JSON, type ChannelObject } from './videoObject.ts';

/** A stored channel as search streams show it, with how many of its videos are stored (and deleted); undefined when unknown. */
export async function findChannel(
  sql: Queryable,
  channelId: string,
): Promise<(ChannelObject & { storedVideos: number; deletedVideos: number }) | undefined> {
  const [row] = await sql<{ channel: ChannelObject; storedVideos: number; deletedVideos: number }[]>`
    select ${sql.unsafe(CHANNEL_JSON)} as channel,
      (select count(*)::int from videos v where v.channel_id = c.channel_id) as "storedVideos",
      (select count(*)::int from videos v where v.channel_id = c.channel_id and v.status in ('deleted', 're-uploaded')) as "deletedVideos"
    from channels c where c.channel_id = ${channelId}`;
  return row ? { ...row.channel, storedVideos: row.storedVideos, deletedVideos: row.deletedVideos } : undefined;
}
