/**
 * Changes made the way the pipeline makes them (a status or metadata write to videos: the triggers of
 * sql/045 log the change), and watchlists, items and endpoints as plain rows.
 */
import type { Sql } from '../../core/db/database.ts';
import { fanOutChanges } from '../../core/watchlists/fanOut.ts';

let next = 0;
/** A fresh, valid id: `prefix` and `length` digits. */
const freshId = (prefix: string, length: number) => `${prefix}${String(++next).padStart(length, '0')}`;

const newChannelId = () => freshId('UC', 22);
const newVideoId = () => freshId('v', 10);

export async function insertChannel(sql: Sql, title = 'A channel'): Promise<string> {
  const channelId = newChannelId();
  await sql`insert into channels (channel_id, title) values (${channelId}, ${title})`;
  return channelId;
}

/** Live videos, their first status (not a change). */
export async function insertVideos(sql: Sql, channelId: string, titles: readonly string[]): Promise<string[]> {
  const ids = titles.map(() => newVideoId());
  await sql`
    insert into videos (video_id, channel_id, title, status)
    select unnest(${ids}::text[]), ${channelId}, unnest(${titles as string[]}::text[]), 'live'`;
  return ids;
}

/** A confirmed deletion as check_status writes it. */
export async function deleteVideos(sql: Sql, videoIds: readonly string[], reason = 'terms_of_service', claimant: string | null = null) {
  await sql`
    update videos set status = 'deleted', status_reason = ${reason}, status_claimant = ${claimant},
      status_source = 'data_api', status_evidence = 'videos.list: no item | then: player: This video has been removed for violating the Terms of Service'
    where video_id = any(${videoIds as string[]}::text[])`;
}

export async function restoreVideo(sql: Sql, videoId: string) {
  await sql`update videos set status = 'live', status_reason = null, status_claimant = null, status_source = 'data_api', status_evidence = 'videos.list: public'
    where video_id = ${videoId}`;
}

export async function retitleVideo(sql: Sql, videoId: string, title: string) {
  await sql`update videos set title = ${title} where video_id = ${videoId}`;
}

export async function insertWatchlist(sql: Sql, ownerId: string, name = 'Watched'): Promise<string> {
  const [row] = await sql<{ id: string }[]>`insert into watchlists (owner_id, name) values (${ownerId}, ${name}) returning id::text`;
  return row!.id;
}

export async function watchChannel(sql: Sql, watchlistId: string, channelId: string) {
  await sql`insert into watchlist_items (watchlist_id, kind, channel_id) values (${watchlistId}, 'channel', ${channelId})`;
}

export async function watchVideo(sql: Sql, watchlistId: string, videoId: string) {
  await sql`insert into watchlist_items (watchlist_id, kind, video_id) values (${watchlistId}, 'video', ${videoId})`;
}

/** Runs the fan-out as the fan_out_changes task does. */
export const fanOut = (sql: Sql) => fanOutChanges(sql);
