import type { Sql } from '../../../core/db/database.ts';
import type { GeneratedSummary } from '../../../core/summaries/summary.ts';
import { corpusVideoId } from '../../../test/kit/corpus.ts';
import { fakeChannelId } from '../../../test/kit/ids.ts';
import { draw, mix32, random, zipfCdf } from '../../../test/kit/random.ts';
import { topicWords, type Vocabulary } from '../lib/corpus.ts';
import { numberKnob } from '../lib/knobs.ts';
import { round, secondsSince } from '../lib/stats.ts';

export const BUILD = {
  summaries: numberKnob('SUMMARIES_BENCH_COUNT', 100_000),
  channels: 2_000,
  /** Shares of `summaries` that no list may show: private on listed videos, private alone, failed, generating. */
  hidden: { privateOnListed: 0.035, privateAlone: 0.015, failed: 0.01, generating: 0.005 },
  languages: { en: 0.5, es: 0.14, fr: 0.12, ru: 0.1, de: 0.08, ja: 0.06 } as Record<string, number>,
};
const BATCH = 10_000;

/**
 * Channels, videos and summaries, bulk-loaded with set-based INSERTs while the counts and list triggers
 * are off; their facet counts and list entries are then made in one statement each, as sql/015 and
 * sql/037 define them, and the triggers turned back on.
 */
export async function buildSummaries(sql: Sql, vocabulary: Vocabulary, templates: GeneratedSummary[]) {
  const rnd = random(mix32(1, 0xdb));
  const words = topicWords(vocabulary);
  const wordCdf = zipfCdf(words.length, 0.9, 5);
  const title = (count: number) => Array.from({ length: count }, () => words[draw(wordCdf, rnd)]!).join(' ');
  const clean = (tags: string[]) => [...new Set(tags.map((tag) => tag.toLowerCase().trim()).filter((tag) => /^.{2,40}$/.test(tag)))];
  const { en, fr, ru } = vocabulary.vocabularies;
  // No Spanish or German datasets: their summaries draw from the English tags, as much of YouTube's tagging is.
  const tagLists: Record<string, string[]> = { en: clean(en.tags), fr: clean(fr.tags), ru: clean(ru.tags) };
  tagLists.ja = [...vocabulary.cjk.words, ...tagLists.en!];
  tagLists.es = tagLists.de = tagLists.en!;
  const tagCdfs = Object.fromEntries(Object.entries(tagLists).map(([language, list]) => [language, zipfCdf(list.length, 1, 2.7)]));
  const channelIds = Array.from({ length: BUILD.channels }, (_, i) => fakeChannelId(`summaries-bench:1:${i}`));
  const channelLanguage = channelIds.map(() => {
    let u = rnd();
    for (const [language, share] of Object.entries(BUILD.languages)) if ((u -= share) < 0) return language;
    return 'en';
  });
  const hidden = Object.entries(BUILD.hidden).flatMap(([kind, share]) => Array<string>(Math.round(BUILD.summaries * share)).fill(kind));
  // Videos below BUILD.summaries have a listed summary; those above only hidden ones.
  const videos = BUILD.summaries + hidden.length;
  const channelCdf = zipfCdf(BUILD.channels, 0.9, 3);
  const videoChannel = Int32Array.from({ length: videos }, () => draw(channelCdf, rnd));
  const owners = await sql<{ id: string }[]>`
    insert into users (email, tier) select 'summaries-bench-' || g || '@example.org', 'registered' from generate_series(1, 50) g returning id::text`;
  const from = Date.UTC(2024, 6, 1);
  const span = 730 * 86_400_000;
  const row = (video: number, owner: string | null, status: string, at: number) => {
    const language = rnd() < 0.9 ? channelLanguage[videoChannel[video]!]! : 'en';
    const tags = new Set<string>();
    for (let attempt = 0, wanted = 6 + Math.floor(rnd() * 5); tags.size < wanted && attempt < 40; attempt++)
      tags.add(tagLists[language]![draw(tagCdfs[language]!, rnd)]!);
    const quoted = [...tags].map((tag) => `"${tag.replace(/["\\]/g, '\\$&')}"`);
    const k = 1 + (video % templates.length);
    return { video: corpusVideoId(1, video), owner, status, at: new Date(at).toISOString(), language, tags: `{${quoted}}`, k };
  };
  const rows = [
    ...Array.from({ length: BUILD.summaries }, (_, i) => row(i, null, 'generated', from + (i / BUILD.summaries) * span)),
    ...hidden.map((kind, j) => {
      const owner = kind.startsWith('private') ? owners[j % owners.length]!.id : null;
      const video = kind === 'privateOnListed' ? (j * 29) % BUILD.summaries : BUILD.summaries + j;
      return row(video, owner, owner ? 'generated' : kind, from + rnd() * span);
    }),
  ].sort((a, b) => a.at.localeCompare(b.at));
  await sql`
    insert into channels (channel_id, title) select * from unnest(${channelIds}::text[], ${channelIds.map(() => title(2))}::text[])`;
  for (let first = 0; first < videos; first += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, videos - first) }, (_, i) => first + i);
    await sql`
      insert into videos (video_id, channel_id, title, language, status, has_summary)
      select id, channel, title, language, 'live', listed = 't' from unnest(${batch.map((i) => corpusVideoId(1, i))}::text[], ${batch.map((i) => channelIds[videoChannel[i]!]!)}::text[],
        ${batch.map(() => title(4 + Math.floor(rnd() * 6)))}::text[], ${batch.map((i) => channelLanguage[videoChannel[i]!]!)}::text[],
        ${batch.map((i) => (i < BUILD.summaries ? 't' : 'f'))}::text[]) as x(id, channel, title, language, listed)`;
  }
  const started = performance.now();
  await sql`alter table summaries disable trigger summaries_counts, disable trigger summaries_list_entries`;
  const text = (pick: (template: GeneratedSummary) => string) => templates.map(pick);
  for (let first = 0; first < rows.length; first += BATCH) {
    const batch = rows.slice(first, first + BATCH);
    await sql`
      insert into summaries (video_id, channel_id, owner_id, private, status, error, title, tldr, key_points, detailed_summary, tags, language,
        llm_model, requested_at, generated_at, updated_at)
      select v.video_id, v.channel_id, x.owner, x.owner is not null, x.status,
        case when x.status = 'failed' then 'the LLM endpoint was unavailable' end,
        case when x.status = 'generated' then v.title end,
        case when x.status = 'generated' then (${text((t) => t.tldr)}::text[])[x.k] end,
        case when x.status = 'generated' then ((${text((t) => JSON.stringify(t.keyPoints))}::text[])[x.k])::jsonb end,
        case when x.status = 'generated' then (${text((t) => t.detailedSummary)}::text[])[x.k] end,
        case when x.status = 'generated' then x.tags::text[] else '{}' end,
        case when x.status = 'generated' then x.language end,
        case when x.status = 'generated' then 'afterimage-extractive-1' end,
        x.at - interval '40 seconds', case when x.status = 'generated' then x.at end, x.at
      from unnest(${batch.map((r) => r.video)}::text[], ${batch.map((r) => r.owner)}::uuid[], ${batch.map((r) => r.status)}::text[],
        ${batch.map((r) => r.k)}::int[], ${batch.map((r) => r.tags)}::text[], ${batch.map((r) => r.language)}::text[], ${batch.map((r) => r.at)}::timestamptz[])
        as x(video, owner, status, k, tags, language, at)
      join videos v on v.video_id = x.video`;
  }
  const bulkSeconds = secondsSince(started);
  await sql`
    insert into summary_facets (facet, language, value, count)
    select facet, language, value, count(*) from (
      select 'language' as facet, '' as language, s.language as value from summaries s where s.status = 'generated' and not s.private
      union all select 'tag', s.language, t.tag from summaries s cross join unnest(s.tags) t(tag) where s.status = 'generated' and not s.private
      union all select 'tag', '', t.tag from summaries s cross join unnest(s.tags) t(tag) where s.status = 'generated' and not s.private
      union all select 'channel', '', s.channel_id from summaries s where s.status = 'generated' and not s.private) r
    group by facet, language, value`;
  await sql`
    insert into summary_list_entries select r.* from summaries s cross join summary_list_rows(s) r where s.status = 'generated' and not s.private`;
  await sql`alter table summaries enable trigger summaries_counts, enable trigger summaries_list_entries`;
  const countsSeconds = secondsSince(started) - bulkSeconds;
  for (const table of ['summaries', 'summary_facets', 'summary_list_entries', 'videos', 'channels'])
    await sql.unsafe(`vacuum analyze ${table}`);
  return { summaries: rows.length, videos, bulkSeconds: round(bulkSeconds, 1), countsSeconds: round(countsSeconds, 1) };
}
