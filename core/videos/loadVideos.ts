import type { Queryable } from '../db/database.ts';
import { VIDEO_JSON, type VideoObject } from './videoObject.ts';

/** The stored videos of the given ids, in the order given; ids not stored are left out. */
export async function loadVideos(sql: Queryable, videoIds: readonly string[]): Promise<VideoObject[]> {
  if (videoIds.length === 0) return [];
  const rows = await sql<{ video: VideoObject }[]>`
    select ${sql.unsafe(VIDEO_JSON)} as video
    from unnest(${videoIds as string[]}::text[]) with ordinality as wanted (video_id, position)
    join videos v on v.video_id = wanted.video_id join channels c on c.channel_id = v.channel_id
    order by wanted.position`;
  return rows.map((row) => row.video);
}
