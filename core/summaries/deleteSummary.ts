import type { Queryable } from '../db/database.ts';

/**
 * Removes the public summary of a video (administrators' work); the summaries trigger clears
 * videos.has_summary and the browse counts in the same statement. Private summaries are their
 * owners' and are not touched. Answers whether there was one.
 */
export async function deletePublicSummary(sql: Queryable, videoId: string): Promise<boolean> {
  const deleted = await sql`delete from summaries where video_id = ${videoId} and not private`;
  return deleted.count > 0;
}
