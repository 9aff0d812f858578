import type { Queryable } from '../db/database.ts';
import { VIDEO_JSON, type VideoObject } from '../videos/videoObject.ts';

/** What the database holds of a channel now: how many videos, and the newest `limit` of them. */
export async function storedVideos(sql: Queryable, channelId: string, limit: number): Promise<{ total: number; videos: VideoObject[] }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from videos where channel_id = ${channelId}`;
  const rows = await sql<{ video: VideoObject }[]>`
    select ${sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id
    where v.channel_id = ${channelId} order by v.upload_date desc nulls last, v.video_id limit ${limit}`;
  return { total: count!.total, videos: rows.map((row) => row.video) };
}
