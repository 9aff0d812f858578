import type { Queryable } from '../db/database.ts';

export interface OwnSummary {
  videoId: string;
  title: string;
  status: 'generating' | 'ready' | 'failed';
  requestedAt: Date;
}

/** A user's private summaries, newest first (at most `limit`), with the video's title while the summary has none. */
export async function listOwnSummaries(sql: Queryable, ownerId: string, limit = 100): Promise<OwnSummary[]> {
  return sql<OwnSummary[]>`
    select s.video_id as "videoId", coalesce(s.title, v.title, s.video_id) as title, s.status, s.requested_at as "requestedAt"
    from summaries s join videos v on v.video_id = s.video_id
    where s.owner_id = ${ownerId}::uuid and s.private
    order by s.requested_at desc, s.id desc limit ${limit}`;
}
