import type { Queryable } from '../db/database.ts';

/** URLs per sitemap file, the protocol's maximum: past it /sitemap.xml becomes an index of files. */
export const SITEMAP_URLS_PER_FILE = 50_000;

/**
 * One sitemap file of public generated summaries, oldest first (so a file's URLs change only when a
 * summary is deleted or regenerated), read from the index summaries_sitemap alone (sql/037).
 * Private summaries and stenograms are never listed.
 */
export async function sitemapEntries(sql: Queryable, file: number): Promise<Array<{ videoId: string; generatedAt: Date }>> {
  return sql<Array<{ videoId: string; generatedAt: Date }>>`
    select video_id as "videoId", generated_at as "generatedAt" from summaries
    where status = 'generated' and not private
    order by generated_at, id
    limit ${SITEMAP_URLS_PER_FILE} offset ${(file - 1) * SITEMAP_URLS_PER_FILE}`;
}
