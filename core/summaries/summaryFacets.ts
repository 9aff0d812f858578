/** The counts behind /api/summary/tags, /languages and /channels: public ready summaries only (sql/015_summaries.sql keeps them). */
import type { Queryable } from '../db/database.ts';

export interface TagCount {
  tag: string;
  count: number;
}

/** The most used tags across all languages, and the most used of each language (most summaries first). */
export async function summaryTags(sql: Queryable, options: { limit: number; language?: string }) {
  const [all, byLanguage] = await Promise.all([
    sql<TagCount[]>`
      select value as tag, count from summary_facets where facet = 'tag' and language = ${options.language ?? ''}
      order by count desc, value limit ${options.limit}`,
    sql<{ language: string; count: number; tags: TagCount[] }[]>`
      select l.value as language, l.count,
        coalesce((select json_agg(json_build_object('tag', t.value, 'count', t.count) order by t.count desc, t.value)
          from (select value, count from summary_facets where facet = 'tag' and language = l.value order by count desc, value limit ${options.limit}) t), '[]') as tags
      from summary_facets l
      where l.facet = 'language' and (${options.language ?? null}::text is null or l.value = ${options.language ?? null})
      order by l.count desc, l.value`,
  ]);
  return { tags: all, languages: byLanguage };
}

/** Public generated summaries in all: every one has exactly one language, so their counts add up to all. */
export async function countPublicSummaries(sql: Queryable): Promise<number> {
  const [row] = await sql<
    { count: number }[]
  >`select coalesce(sum(count), 0)::int as count from summary_facets where facet = 'language' and language = ''`;
  return row!.count;
}

export async function summaryLanguages(sql: Queryable) {
  return sql<{ language: string; count: number }[]>`
    select value as language, count from summary_facets where facet = 'language' order by count desc, value`;
}

/** Channels with public summaries, most summaries first, a page at a time (cut from the counts' index, then joined). */
export async function summaryChannels(sql: Queryable, page: { offset: number; limit: number }) {
  const [rows, [total]] = await Promise.all([
    sql<{ channelId: string; channelTitle: string | null; handle: string | null; summaries: number }[]>`
      select f.value as "channelId", nullif(c.title, '') as "channelTitle", c.handle, f.count as summaries
      from (
        select value, count from summary_facets where facet = 'channel' and language = ''
        order by count desc, value limit ${page.limit} offset ${page.offset}
      ) f join channels c on c.channel_id = f.value
      order by f.count desc, f.value`,
    sql<{ count: number }[]>`select count(*)::int as count from summary_facets where facet = 'channel' and language = ''`,
  ]);
  return { rows, total: total!.count };
}
