import type { Queryable } from '../db/database.ts';
import { CHANNEL_JSON, type ChannelObject } from '../videos/videoObject.ts';

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
