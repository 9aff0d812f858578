import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../db/database.ts';
import { countPublicSummaries } from './summaryFacets.ts';
import { SUMMARY_LIST_COLUMNS, type SummaryRow } from './summaryObject.ts';

export interface BrowseFilters {
  tag?: string;
  channelId?: string;
  language?: string;
}

/**
 * Public generated summaries, newest first, filtered by tag, channel and language, a page at a time,
 * as list items (without key points and the detailed summary).
 * The page is a range of summary_list_entries (sql/037): every combination of filters has its btree,
 * ending in the order, and only public generated summaries have entries. The total comes from the
 * counts table when at most one filter (or a tag with a language) is given, else from the same range.
 */
export async function browseSummaries(
  sql: Queryable,
  filters: BrowseFilters,
  page: { offset: number; limit: number },
): Promise<{ rows: SummaryRow[]; total: number }> {
  const conditions: PendingQuery<Row[]>[] = [
    // The lists without a tag read the entries of tag '' (a literal: its range holds every summary, and the plan should know).
    filters.tag !== undefined ? sql`e.tag = ${filters.tag}` : sql`e.tag = ''`,
    ...(filters.channelId !== undefined ? [sql`e.channel_id = ${filters.channelId}`] : []),
    ...(filters.language !== undefined ? [sql`e.language = ${filters.language}`] : []),
  ];
  const where = conditions.reduce((all, condition) => sql`${all} and ${condition}`);
  const [rows, total] = await Promise.all([
    // The page is cut from the entries alone (an index-only scan: a deep page skips index entries), then joined.
    sql<SummaryRow[]>`
      select ${sql.unsafe(SUMMARY_LIST_COLUMNS)}
      from (
        select e.summary_id, e.generated_at from summary_list_entries e where ${where}
        order by e.generated_at desc, e.summary_id desc
        limit ${page.limit} offset ${page.offset}
      ) e join summaries s on s.id = e.summary_id join videos v on v.video_id = s.video_id join channels c on c.channel_id = s.channel_id
      order by e.generated_at desc, e.summary_id desc`,
    countSummaries(sql, filters, where),
  ]);
  return { rows, total };
}

async function countSummaries(sql: Queryable, filters: BrowseFilters, where: PendingQuery<Row[]>): Promise<number> {
  const { tag, channelId, language } = filters;
  if (tag === undefined && channelId === undefined && language === undefined) return countPublicSummaries(sql);
  const counted = facetCounted(filters);
  if (counted) {
    const [row] = await sql<{ count: number }[]>`
      select count from summary_facets where facet = ${counted.facet} and language = ${counted.language} and value = ${counted.value}`;
    return row?.count ?? 0;
  }
  // A channel with a tag or a language: at most the channel's summaries, counted in the page's index.
  const [row] = await sql<{ count: number }[]>`select count(*)::int as count from summary_list_entries e where ${where}`;
  return row!.count;
}

/** The counts-table row that holds the total for these filters, when there is one (a missing row is 0). */
function facetCounted({ tag, channelId, language }: BrowseFilters): { facet: string; language: string; value: string } | undefined {
  if (channelId !== undefined)
    return tag === undefined && language === undefined ? { facet: 'channel', language: '', value: channelId } : undefined;
  if (tag !== undefined) return { facet: 'tag', language: language ?? '', value: tag };
  if (language !== undefined) return { facet: 'language', language: '', value: language };
  return undefined;
}
