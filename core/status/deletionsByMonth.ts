import type { Queryable } from '../db/database.ts';

/**
 * A channel's deletions per calendar month (UTC): each video now deleted or re-uploaded counted once,
 * in the month its status history first saw it gone (its status_since when the history holds no such entry).
 */
export async function deletionsByMonth(sql: Queryable, channelId: string): Promise<Array<{ month: string; deletions: number }>> {
  return sql<Array<{ month: string; deletions: number }>>`
    select to_char(date_trunc('month', gone_at at time zone 'UTC'), 'YYYY-MM') as month, count(*)::int as deletions
    from (
      select coalesce(
        (select min(h.observed_at) from video_status_history h where h.video_id = v.video_id and h.status in ('deleted', 're-uploaded')),
        v.status_since) as gone_at
      from videos v where v.channel_id = ${channelId} and v.status in ('deleted', 're-uploaded')
    ) gone
    group by 1 order by 1`;
}
