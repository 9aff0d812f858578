import type { Sql } from '../db/database.ts';
import type { ChannelRecord } from '../sources/types.ts';
import { upsertChannel } from '../videos/upsertChannel.ts';

export interface StartedSearch { sessionId: string; crawlId: string; joined: boolean }

/**
 * Opens a search session on a channel in one transaction: records the channel, joins the crawl
 * already running for it or starts one (its first job enqueued in the same transaction), and
 * notes the position from which the crawl's events are the session's live part.
 */
export async function startSearch(
  sql: Sql,
  input: { userId: string | null; channel: ChannelRecord; query: string; kind: 'full' | 'archive_page'; archiveCursor?: string | null },
): Promise<StartedSearch> {
  return sql.begin(async (tx) => {
    await upsertChannel(tx, input.channel);
    const channelId = input.channel.channelId;
    const [running] = await tx<{ id: string }[]>`
      select id::text from crawls where channel_id = ${channelId} and kind = ${input.kind} and status = 'running' for update`;
    let crawlId = running?.id;
    if (!crawlId) {
      const [crawl] = await tx<{ id: string }[]>`
        insert into crawls (channel_id, kind, archive_cursor) values (${channelId}, ${input.kind}, ${input.archiveCursor ?? null}) returning id::text`;
      crawlId = crawl!.id;
      await tx`
        select graphile_worker.add_job('crawl_channel', json_build_object('crawlId', ${crawlId}::bigint, 'step', 0),
          job_key => ${`crawl:${crawlId}:0`}, max_attempts => 5)`;
    }
    const [session] = await tx<{ id: string }[]>`
      insert into search_sessions (user_id, channel_id, crawl_id, join_xid, query)
      values (${input.userId}, ${channelId}, ${crawlId}, pg_snapshot_xmin(pg_current_snapshot()), ${input.query})
      returning id`;
    return { sessionId: session!.id, crawlId, joined: Boolean(running) };
  });
}
