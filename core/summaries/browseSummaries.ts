import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../db/database.ts';
import { SUMMARY_LIST_COLUMNS, type SummaryRow } from './summaryObject.ts';

export interface BrowseFilters {
  tag?: string;
  channelId?: string;
  language?: string;
}

/**
 * Public generated summaries, newest first, filtered by tag, channel and language, a page at a time,
 * as list items (without key points and the detailed summary).
 * Private summaries are never listed (the partial indexes hold public generated ones only). The total
 * comes from the counts table when at most one filter (or a tag with a language) is given.
 */
export async function browseSummaries(
  sql: Queryable,
  filters: BrowseFilters,
  page: { offset: number; limit: number },
): Promise<{ rows: SummaryRow[]; total: number }> {
  const conditions: PendingQuery<Row[]>[] = [
    sql`s.status = 'generated' and not s.private`,
    ...(filters.tag !== undefined ? [sql`s.tags @> array[${filters.tag}]::text[]`] : []),
    ...(filters.channelId !== undefined ? [sql`s.channel_id = ${filters.channelId}`] : []),
    ...(filters.language !== undefined ? [sql`s.language = ${filters.language}`] : []),
  ];
  const where = conditions.reduce((all, condition) => sql`${all} and ${condition}`);
  const [rows, total] = await Promise.all([
    // The page is cut from summaries alone, then joined: a deep page skips rows without joining them.
    sql<SummaryRow[]>`
      select ${sql.unsafe(SUMMARY_LIST_COLUMNS)}
      from (
        select * from summaries s where ${where}
        order by s.generated_at desc, s.id desc
        limit ${page.limit} offset ${page.offset}
      ) s join videos v on v.video_id = s.video_id join channels c on c.channel_id = s.channel_id
      order by s.generated_at desc, s.id desc`,
    countSummaries(sql, filters, where),
  ]);
  return { rows, total };
}

async function countSummaries(sql: Queryable, filters: BrowseFilters, where: PendingQuery<Row[]>): Promise<number> {
  const counted = facetCounted(filters);
  if (counted) {
    const [row] = await sql<{ count: number }[]>`
      select coalesce(sum(count), 0)::int as count from summary_facets
      where facet = ${counted.facet} and language = ${counted.language} and (${counted.value}::text is null or value = ${counted.value})`;
    return row!.count;
  }
  const [row] = await sql<{ count: number }[]>`select count(*)::int as count from summaries s where ${where}`;
  return row!.count;
}

/** The counts-table row that holds the total for these filters, when there is one. */
function facetCounted(filters: BrowseFilters): { facet: string; language: string; value: string | null } | undefined {
  const { tag, channelId, language } = filters;
  if (channelId !== undefined)
    return tag === undefined && language === undefined ? { facet: 'channel', language: '', value: channelId } : undefined;
  if (tag !== undefined) return { facet: 'tag', language: language ?? '', value: tag };
  // Every summary has exactly one language: their counts add up to all summaries.
  return { facet: 'language', language: '', value: language ?? null };
}
