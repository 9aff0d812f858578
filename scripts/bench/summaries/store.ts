import type { Sql } from '../../../core/db/database.ts';
import type { GeneratedSummary } from '../../../core/summaries/summary.ts';
import { corpusVideoId } from '../../../test/kit/corpus.ts';
import { zipfCdf } from '../../../test/kit/random.ts';
import type { Vocabulary } from '../lib/corpus.ts';
import { median, percentile, round } from '../lib/stats.ts';
import { SEED, ms } from './shape.ts';

export const arrayLiteral = (items: string[]) => `{${items.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

/** Per language, the tags summaries of it draw from (lower case, ≤ 40 characters, most used first) with Zipf weights. */
export function tagVocabularies(vocabulary: Vocabulary) {
  const clean = (tags: string[]) => [
    ...new Set(tags.map((tag) => tag.toLowerCase().trim()).filter((tag) => tag.length >= 2 && tag.length <= 40)),
  ];
  const en = clean(vocabulary.vocabularies.en.tags);
  const lists: Record<string, string[]> = {
    en,
    fr: clean(vocabulary.vocabularies.fr.tags),
    ru: clean(vocabulary.vocabularies.ru.tags),
    // No Spanish or German datasets: their summaries draw from the English tags (as much of YouTube's tagging is).
    es: en,
    de: en,
    ja: [...vocabulary.cjk.words, ...en],
  };
  return Object.fromEntries(
    Object.entries(lists).map(([language, list]) => [language, { list, cdf: zipfCdf(list.length, 1, 2.7) }]),
  ) as Record<string, { list: string[]; cdf: Float64Array }>;
}

export interface StoreTiming {
  count: number;
  medianMs: number | null;
  p95Ms: number | null;
  perSecond: number | null;
}

/** One summary to store: its video (by index), owner, status, time, and what it says. */
export interface SummarySeed {
  video: number;
  owner: string | null;
  status: 'generated' | 'failed' | 'generating';
  at: number;
  language: string;
  tags: string;
  model: string;
  k: number;
}

export const SINGLE_PLAIN = 300;
export const MULTI_STORE = 1_000;
export const SINGLE_STORES = 1_000;

/** Summaries (any status) in one set-based INSERT … SELECT FROM unnest; texts are the templates' (1-based `k`). */
export async function insertSummaries(
  sql: Sql,
  rows: SummarySeed[],
  texts: { tldrs: string[]; points: string[]; details: string[] },
): Promise<void> {
  await sql`
    insert into summaries (video_id, channel_id, owner_id, private, status, error, title, tldr, key_points, detailed_summary, tags, language,
      llm_model, prompt_tokens, completion_tokens, requested_at, generated_at, updated_at)
    select v.video_id, v.channel_id, x.owner, x.owner is not null, x.status,
      case when x.status = 'failed' then 'the LLM endpoint was unavailable (gave up after 5 attempts)' end,
      case when x.status = 'generated' then v.title end,
      case when x.status = 'generated' then (${texts.tldrs}::text[])[x.k] end,
      case when x.status = 'generated' then ((${texts.points}::text[])[x.k])::jsonb end,
      case when x.status = 'generated' then (${texts.details}::text[])[x.k] end,
      case when x.status = 'generated' then x.tags::text[] else '{}' end,
      case when x.status = 'generated' then x.language end,
      case when x.status = 'generated' then x.model end,
      case when x.status = 'generated' and x.model <> 'afterimage-extractive-1' then 9000 + x.k * 100 end,
      case when x.status = 'generated' and x.model <> 'afterimage-extractive-1' then 900 + x.k * 10 end,
      x.at - interval '40 seconds', case when x.status = 'generated' then x.at end, x.at
    from unnest(${rows.map((row) => corpusVideoId(SEED, row.video))}::text[], ${rows.map((row) => row.owner)}::uuid[], ${rows.map((row) => row.status)}::text[],
      ${rows.map((row) => row.k)}::int[], ${rows.map((row) => row.tags)}::text[], ${rows.map((row) => row.language)}::text[], ${rows.map((row) => row.model)}::text[],
      ${rows.map((row) => new Date(row.at).toISOString())}::timestamptz[])
      as x(video, owner, status, k, tags, language, model, at)
    join videos v on v.video_id = x.video`;
}

/** One public summary stored as the service does: requested (insert, generating), then written (update to ready), each its own transaction. */
export async function storeSummary(sql: Sql, row: SummarySeed, template: GeneratedSummary): Promise<void> {
  const videoId = corpusVideoId(SEED, row.video);
  const at = new Date(row.at);
  const [inserted] = await sql<{ id: string }[]>`
    insert into summaries (video_id, channel_id, requested_at, updated_at)
    select video_id, channel_id, ${new Date(row.at - 40_000)}, ${new Date(row.at - 40_000)} from videos where video_id = ${videoId}
    returning id::text as id`;
  await sql`
    update summaries set status = 'generated', error = null, title = (select title from videos where video_id = ${videoId}), tldr = ${template.tldr},
      key_points = ${sql.json(template.keyPoints)}, detailed_summary = ${template.detailedSummary}, tags = ${row.tags}::text[], language = ${row.language},
      llm_model = ${row.model}, generated_at = ${at}, updated_at = ${at}
    where id = ${inserted!.id} and status = 'generating'`;
}

export function storeTiming(latencies: number[], seconds: number): StoreTiming {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    medianMs: ms(median(sorted), 2),
    p95Ms: ms(percentile(sorted, 95), 2),
    perSecond: round(sorted.length / seconds, 0),
  };
}

/** Public ready summaries' facet rows counted from the table, as summary_facet_rows (sql/015) lists them. */
export const FACET_RECOUNT = `
  select facet, language, value, count(*)::int as count from (
    select 'language' as facet, '' as language, s.language as value from summaries s where s.status = 'generated' and not s.private
    union all select 'tag', s.language, t.tag from summaries s cross join unnest(s.tags) as t(tag) where s.status = 'generated' and not s.private
    union all select 'tag', '', t.tag from summaries s cross join unnest(s.tags) as t(tag) where s.status = 'generated' and not s.private
    union all select 'channel', '', s.channel_id from summaries s where s.status = 'generated' and not s.private) r
  group by facet, language, value`;

/** Public generated summaries' list entries worked out from the table, as the trigger of sql/037 writes them. */
export const LIST_ENTRIES_RECOUNT = `
  select r.* from summaries s cross join summary_list_rows(s) r where s.status = 'generated' and not s.private`;
