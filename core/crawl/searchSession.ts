/**
 * What a search session reads while its crawl runs: the session, its snapshot (the videos stored
 * before it opened, a page at a time), what the channel holds now, and how far its crawl is.
 */
import type { Queryable } from '../db/database.ts';
import { crawlStream } from '../events/events.ts';
import { searchEvents } from '../events/searchEvents.ts';
import { CHANNEL_JSON, type ChannelObject, VIDEO_JSON, type VideoObject } from '../videos/videoObject.ts';

export interface SearchSession {
  id: string;
  channelId: string;
  crawlId: string;
  /** The crawl has ended (complete or error). */
  crawlFinished: boolean;
  /** The crawl's events after this number are the session's live part. */
  joinSeq: number;
  /** Videos first seen up to this instant are the session's snapshot. */
  createdAt: Date;
  channel: ChannelObject;
}

/** A search session of this owner (null: the anonymous caller), with its channel as stored; another owner's is as unknown as a missing one. */
export async function findSession(sql: Queryable, sessionId: string, userId: string | null): Promise<SearchSession | undefined> {
  const [session] = await sql<SearchSession[]>`
    select s.id, s.channel_id as "channelId", s.crawl_id::text as "crawlId", s.join_seq as "joinSeq", s.created_at as "createdAt",
      cr.status <> 'running' as "crawlFinished", ${sql.unsafe(CHANNEL_JSON)} as channel
    from search_sessions s join channels c on c.channel_id = s.channel_id join crawls cr on cr.id = s.crawl_id
    where s.id = ${sessionId} and s.user_id is not distinct from ${userId}`;
  return session;
}

const SNAPSHOT_PAGE = 500;

/**
 * The session's snapshot: the channel's videos stored before the session opened, a page at a time
 * by video id (byte order) after `after`, read when the caller asks for the next page (at its
 * client's pace). The last page is shorter than the others, possibly empty.
 */
export async function* snapshotPages(
  sql: Queryable,
  session: Pick<SearchSession, 'channelId' | 'createdAt'>,
  after: string,
): AsyncGenerator<VideoObject[]> {
  for (;;) {
    const page = await sql<{ video: VideoObject }[]>`
      select ${sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id
      where v.channel_id = ${session.channelId} and v.first_seen_at <= ${session.createdAt} and v.video_id > ${after} collate "C"
      order by v.video_id collate "C" limit ${SNAPSHOT_PAGE}`;
    yield page.map((row) => row.video);
    if (page.length < SNAPSHOT_PAGE) return;
    after = page[page.length - 1]!.video.videoId;
  }
}

/** Whether the session's snapshot holds this video (a resume point `s:<videoId>` must name one of its own). */
export async function snapshotHolds(
  sql: Queryable,
  session: Pick<SearchSession, 'channelId' | 'createdAt'>,
  videoId: string,
): Promise<boolean> {
  const [found] =
    await sql`select 1 from videos where video_id = ${videoId} and channel_id = ${session.channelId} and first_seen_at <= ${session.createdAt}`;
  return Boolean(found);
}

/** How many of the session's snapshot videos come up to `through` (in the pages' order): what a stream resumed after it has already sent. */
export async function snapshotCountThrough(
  sql: Queryable,
  session: Pick<SearchSession, 'channelId' | 'createdAt'>,
  through: string,
): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from videos
    where channel_id = ${session.channelId} and first_seen_at <= ${session.createdAt} and video_id <= ${through} collate "C"`;
  return row!.count;
}

/** What the database holds of a channel now: how many videos, and the newest `limit` of them. */
export async function storedVideos(sql: Queryable, channelId: string, limit: number): Promise<{ total: number; videos: VideoObject[] }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from videos where channel_id = ${channelId}`;
  const rows = await sql<{ video: VideoObject }[]>`
    select ${sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id
    where v.channel_id = ${channelId} order by v.upload_date desc nulls last, v.video_id limit ${limit}`;
  return { total: count!.total, videos: rows.map((row) => row.video) };
}

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

export interface CrawlProgress {
  status: string;
  channelId: string;
  steps: number;
  videos: number;
}

/** How far a crawl is: its status, the steps it has taken (a retry's progress is not one), and the videos its channel has stored so far. */
export async function crawlProgress(sql: Queryable, crawlId: string): Promise<CrawlProgress | undefined> {
  const [crawl] = await sql<CrawlProgress[]>`
    select cr.status, cr.channel_id as "channelId",
      (select count(*) from events e where e.stream = ${crawlStream(crawlId)} and e.type = ${searchEvents.progress.type} and not (e.payload ? 'retry'))::int as steps,
      (select count(*) from videos v where v.channel_id = cr.channel_id)::int as videos
    from crawls cr where cr.id = ${crawlId}`;
  return crawl;
}
