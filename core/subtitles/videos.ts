import type { Queryable } from '../db/database.ts';

/** What subtitle answers say about a video, and its language (which picks the default track). */
export interface SubtitleVideo {
  videoId: string;
  title: string | null;
  channelId: string;
  channelTitle: string | null;
  language: string | null;
}

/** The stored videos among `ids`, by id; ids not stored are absent. */
export async function findVideos(sql: Queryable, ids: readonly string[]): Promise<Map<string, SubtitleVideo>> {
  const rows = await sql<SubtitleVideo[]>`
    select v.video_id as "videoId", v.title, v.channel_id as "channelId", nullif(c.title, '') as "channelTitle", v.language
    from videos v join channels c on c.channel_id = v.channel_id where v.video_id = any(${ids as string[]}::text[])`;
  return new Map(rows.map((row) => [row.videoId, row]));
}
