import type { Queryable } from '../db/database.ts';
import { VIDEO_JSON, type VideoObject } from './videoObject.ts';

/** Statuses of a video that is gone from the platform (re-uploaded ones too: the original is deleted). */
const GONE_STATUSES = ['deleted', 're-uploaded'] as const;

/**
 * A page of a channel's stored videos, newest upload first (the channel page), all of them or only
 * those gone from the platform, with how many there are in all.
 */
export async function channelVideos(
  sql: Queryable,
  input: { channelId: string; goneOnly: boolean; offset: number; limit: number },
): Promise<{ total: number; videos: VideoObject[] }> {
  const statuses = input.goneOnly ? [...GONE_STATUSES] : null;
  const [count] = await sql<{ total: number }[]>`
    select count(*)::int as total from videos
    where channel_id = ${input.channelId} and (${statuses}::text[] is null or status = any(${statuses}::text[]))`;
  const rows = await sql<{ video: VideoObject }[]>`
    select ${sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id
    where v.channel_id = ${input.channelId} and (${statuses}::text[] is null or v.status = any(${statuses}::text[]))
    order by v.upload_date desc nulls last, v.video_id
    offset ${input.offset} limit ${input.limit}`;
  return { total: count!.total, videos: rows.map((row) => row.video) };
}

/** How many of a channel's stored videos have each status. */
export async function channelStatusCounts(
  sql: Queryable,
  channelId: string,
): Promise<{ live: number; deleted: number; reuploaded: number; checking: number }> {
  const [row] = await sql<{ live: number; deleted: number; reuploaded: number; checking: number }[]>`
    select count(*) filter (where status = 'live')::int as live, count(*) filter (where status = 'deleted')::int as deleted,
      count(*) filter (where status = 're-uploaded')::int as reuploaded, count(*) filter (where status = 'checking')::int as checking
    from videos where channel_id = ${channelId}`;
  return row!;
}
