import type { Queryable, Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { ChannelRecord } from '../sources/types.ts';
import { upsertChannel } from '../videos/upsertChannel.ts';
import { crawlStream } from '../events/events.ts';
import { queueCrawlStep } from './queueStep.ts';

export interface StartedSearch {
  sessionId: string;
  crawlId: string;
  joined: boolean;
  channelTitle: string;
}

/**
 * Opens a search session on a channel in one transaction: records the channel, joins the crawl
 * already running for it or starts one (its first step queued in the same transaction), and
 * notes the position from which the crawl's events are the session's live part. Answers the
 * channel's title as stored.
 */
export async function startSearch(
  sql: Sql,
  input: { userId: string | null; channel: ChannelRecord; query: string; kind: 'full' | 'archive_page'; archiveCursor?: string | null },
  log?: Logger,
): Promise<StartedSearch> {
  return sql.begin(async (tx) => {
    await upsertChannel(tx, input.channel, log);
    const channelId = input.channel.channelId;
    const [running] = await tx<{ id: string }[]>`
      select id::text from crawls where channel_id = ${channelId} and kind = ${input.kind} and status = 'running' for update`;
    let crawlId = running?.id;
    if (!crawlId) {
      const [crawl] = await tx<{ id: string }[]>`
        insert into crawls (channel_id, kind, archive_cursor) values (${channelId}, ${input.kind}, ${input.archiveCursor ?? null}) returning id::text`;
      crawlId = crawl!.id;
      await queueCrawlStep(tx, crawlId, 0);
    }
    return { ...(await openSession(tx, { userId: input.userId, channelId, query: input.query }, crawlId)), joined: Boolean(running) };
  });
}

/**
 * A search session following crawl `crawlId`, in the caller's transaction: its live part is the
 * crawl's events after the last one committed now. What a crawl step still writing adds comes live,
 * and its videos may also be in the snapshot if it commits before the stream reads it.
 */
export async function openSession(tx: Queryable, input: { userId: string | null; channelId: string; query: string }, crawlId: string) {
  const [session] = await tx<{ id: string; channelTitle: string }[]>`
    insert into search_sessions (user_id, channel_id, crawl_id, join_seq, query)
    values (${input.userId}, ${input.channelId}, ${crawlId}, coalesce((select last_seq from event_streams where stream = ${crawlStream(crawlId)}), 0), ${input.query})
    returning id, (select title from channels where channel_id = ${input.channelId}) as "channelTitle"`;
  return { sessionId: session!.id, crawlId, channelTitle: session!.channelTitle };
}
