import type { Queryable } from '../db/database.ts';
import { VIDEO_JSON, type VideoObject } from './videoObject.ts';

/** A stored video as JSON text (VIDEO_JSON, as Postgres writes it), with the texts a search highlights. */
export interface VideoJson {
  videoId: string;
  json: string;
  title: string | null;
  description: string | null;
}

/** The select list of a VideoJson from `videos v` joined with `channels c`. */
export const pageVideoColumns = (sql: Queryable) =>
  sql`v.video_id as "videoId", (${sql.unsafe(VIDEO_JSON)})::text as json, v.title, v.description`;

/** The stored videos of the given ids as JSON text, in the order given; ids not stored are left out. */
export async function loadVideoJson(sql: Queryable, videoIds: readonly string[]): Promise<VideoJson[]> {
  if (videoIds.length === 0) return [];
  return sql<VideoJson[]>`
    select ${pageVideoColumns(sql)}
    from unnest(${videoIds as string[]}::text[]) with ordinality as wanted (video_id, position)
    join videos v on v.video_id = wanted.video_id join channels c on c.channel_id = v.channel_id
    order by wanted.position`;
}

/** The stored videos of the given ids, in the order given; ids not stored are left out. */
export async function loadVideos(sql: Queryable, videoIds: readonly string[]): Promise<VideoObject[]> {
  return (await loadVideoJson(sql, videoIds)).map((row) => JSON.parse(row.json) as VideoObject);
}
