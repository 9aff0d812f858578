import type { Queryable } from '../db/database.ts';
import { VIDEO_JSON, type VideoObject } from '../videos/videoObject.ts';
import type { SearchSession } from './findSession.ts';

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
