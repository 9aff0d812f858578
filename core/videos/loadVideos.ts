import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../db/database.ts';
import { VIDEO_JSON, type VideoObject } from './videoObject.ts';

/** A stored video as JSON text (VIDEO_JSON, as Postgres writes it), with the texts a search highlights. */
export interface VideoJson {
  videoId: string;
  json: string;
  title: string | null;
  description: string | null;
}

/**
 * The stored videos of `ids` (an expression of an ordered text[]) as VideoJson rows, each with its
 * `position` in the array, in that order; ids not stored are left out. A search reads its page of videos
 * in the statement that finds the page's ids (one round trip), a list of ids known beforehand through
 * loadVideoJson.
 */
export const videoJsonOf = (sql: Queryable, ids: PendingQuery<Row[]>) => sql`
  select v.video_id as "videoId", (${sql.unsafe(VIDEO_JSON)})::text as json, v.title, v.description, wanted.position
  from unnest(${ids}) with ordinality as wanted (video_id, position)
  join videos v on v.video_id = wanted.video_id join channels c on c.channel_id = v.channel_id
  order by wanted.position`;

/** A row of videoJsonOf. */
export type PositionedVideoJson = VideoJson & { position: string };
/** A VideoJson's fields alone: a page's rows also carry its position and the statement's other columns (a total). */
export const toVideoJson = ({ videoId, json, title, description }: PositionedVideoJson): VideoJson => ({
  videoId,
  json,
  title,
  description,
});

/** The stored videos of the given ids as JSON text, in the order given; ids not stored are left out. */
export async function loadVideoJson(sql: Queryable, videoIds: readonly string[]): Promise<VideoJson[]> {
  if (videoIds.length === 0) return [];
  return (await sql<PositionedVideoJson[]>`${videoJsonOf(sql, sql`${videoIds as string[]}::text[]`)}`).map(toVideoJson);
}

/** The stored videos of the given ids, in the order given; ids not stored are left out. */
export async function loadVideos(sql: Queryable, videoIds: readonly string[]): Promise<VideoObject[]> {
  return (await loadVideoJson(sql, videoIds)).map((row) => JSON.parse(row.json) as VideoObject);
}
