import type { Queryable } from '../db/database.ts';
import { SUMMARY_COLUMNS, SUMMARY_SOURCE, type SummaryRow } from './summaryObject.ts';

/** Who is looking: their own private summaries are theirs to see; everybody sees public ones. */
export interface SummaryViewer {
  userId: string | null;
}

/**
 * The summary of a video that `viewer` may see: their own private one first, else the public one.
 * Another user's private summary is as unknown as a missing one (filtered in SQL).
 */
export async function findSummary(sql: Queryable, videoId: string, viewer: SummaryViewer): Promise<SummaryRow | undefined> {
  const [row] = await sql<SummaryRow[]>`
    select ${sql.unsafe(SUMMARY_COLUMNS)}
    from ${sql.unsafe(SUMMARY_SOURCE)}
    where s.video_id = ${videoId} and (not s.private or s.owner_id = ${viewer.userId}::uuid)
    order by s.private desc
    limit 1`;
  return row;
}

/** One summary by id, as the generation job and its final event show it. */
export async function readSummary(sql: Queryable, summaryId: string): Promise<SummaryRow | undefined> {
  const [row] = await sql<SummaryRow[]>`
    select ${sql.unsafe(SUMMARY_COLUMNS)}
    from ${sql.unsafe(SUMMARY_SOURCE)}
    where s.id = ${summaryId}`;
  return row;
}
