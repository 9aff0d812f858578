import type { Sql } from '../../../core/db/database.ts';
import type { GeneratedSummary } from '../../../core/summaries/summary.ts';
import { corpusVideoId } from '../../../test/kit/corpus.ts';
import { fakeChannelId } from '../../../test/kit/ids.ts';
import { draw, mix32, random, zipfCdf } from '../../../test/kit/random.ts';
import { topicWords, type Vocabulary } from '../lib/corpus.ts';
import type { BenchContext } from '../lib/harness.ts';
import { round, secondsSince } from '../lib/stats.ts';
import {
  CHANNELS,
  FAILED,
  GENERATING,
  INSERT_BATCH,
  LANGUAGE_MIX,
  OWNERS,
  PRIVATE_ONLY,
  PRIVATE_ON_PUBLIC,
  SEED,
  SUMMARIES,
} from './shape.ts';
import {
  FACET_RECOUNT,
  LIST_ENTRIES_RECOUNT,
  MULTI_STORE,
  SINGLE_PLAIN,
  SINGLE_STORES,
  arrayLiteral,
  insertSummaries,
  storeSummary,
  storeTiming,
  tagVocabularies,
  type StoreTiming,
  type SummarySeed,
} from './store.ts';

interface Build {
  seconds: { channelsAndVideos: number; bulkSummaries: number; facets: number; vacuumAnalyze: number; total: number };
  rows: { channels: number; videos: number; publicReady: number; private: number; failed: number; generating: number; facets: number };
  bulkSummariesPerSecond: number;
  /** Summaries stored one at a time as requestSummary + generateSummary do (insert generating, update ready), and many in one INSERT. */
  stored: {
    withoutTrigger: StoreTiming;
    withTrigger: StoreTiming;
    multiRowWithTrigger: { rows: number; seconds: number; perSecond: number };
  };
  sizeMiB: { summaries: number; summariesIndexes: number; facets: number; listEntries: number };
  averageTags: number;
  checks: string[];
}

/**
 * Channels, videos and summaries. Most summaries go in with set-based INSERTs while the counts
 * and list triggers are disabled, their summary_facets rows, summary_list_entries rows and
 * videos.has_summary then set in one statement each; the newest ones go through the trigger: 1,000 in one multi-row INSERT, then 1,000 one at
 * a time as the service stores them (a few hundred are stored one at a time without the trigger
 * first, for comparison). A recount from the table must then agree with every count and list entry.
 */
export async function buildDatabase(ctx: BenchContext, sql: Sql, vocabulary: Vocabulary, templates: GeneratedSummary[]): Promise<Build> {
  const rnd = random(mix32(SEED, 0xdb));
  const tags = tagVocabularies(vocabulary);
  const titleWords = topicWords(vocabulary);
  const titleCdf = zipfCdf(titleWords.length, 0.9, 5);
  const title = (count: number) =>
    Array.from({ length: count }, () => titleWords[draw(titleCdf, rnd)]!)
      .join(' ')
      .replace(/^./, (c) => c.toUpperCase());
  const started = performance.now();

  // Channels, each with a main language; videos spread over them Zipf-like.
  const channelIds = Array.from({ length: CHANNELS }, (_, i) => fakeChannelId(`summaries-bench:${SEED}:${i}`));
  const channelLanguage = channelIds.map(() => {
    let u = rnd();
    for (const [language, share] of LANGUAGE_MIX) if ((u -= share) < 0) return language;
    return 'en';
  });
  const channelCdf = zipfCdf(CHANNELS, 0.9, 3);
  const videoCount = SUMMARIES + PRIVATE_ONLY + FAILED + GENERATING;
  const videoChannel = Int32Array.from({ length: videoCount }, () => draw(channelCdf, rnd));

  // Every summary, in the order they were generated (ids and times rise together, as they do live).
  const owners = (
    await sql<{ id: string }[]>`
    insert into users (email, tier) select 'summaries-bench-' || g || '@example.org', 'registered' from generate_series(1, ${OWNERS}::int) g returning id::text`
  ).map((row) => row.id);
  const generatedFrom = Date.UTC(2024, 6, 1);
  const span = 730 * 86_400_000;
  let tagTotal = 0;
  const seed = (video: number, owner: string | null, status: SummarySeed['status'], at: number, k: number): SummarySeed => {
    const language = rnd() < 0.9 ? channelLanguage[videoChannel[video]!]! : 'en';
    const vocabularyOf = tags[language]!;
    const wanted = 6 + Math.floor(rnd() * 5);
    const chosen = new Set<string>();
    for (let attempt = 0; chosen.size < wanted && attempt < 40; attempt++) chosen.add(vocabularyOf.list[draw(vocabularyOf.cdf, rnd)]!);
    if (status === 'generated' && owner === null) tagTotal += chosen.size;
    return {
      video,
      owner,
      status,
      at,
      language,
      tags: arrayLiteral([...chosen]),
      model: rnd() < 0.8 ? 'afterimage-extractive-1' : 'gpt-4o-mini',
      k: 1 + (k % templates.length),
    };
  };
  const publicReady = Array.from({ length: SUMMARIES }, (_, i) =>
    seed(i, null, 'generated', generatedFrom + (i / SUMMARIES) * span + (rnd() - 0.5) * 3_600_000, i),
  );
  publicReady.sort((a, b) => a.at - b.at);
  const later = () => generatedFrom + rnd() * span;
  // Private ones (on publicly summarised videos and on others), failed and generating ones: never listed.
  const others: SummarySeed[] = [
    ...Array.from({ length: PRIVATE_ON_PUBLIC }, (_, j) => seed((j * 29) % SUMMARIES, owners[j % OWNERS]!, 'generated', later(), j)),
    ...Array.from({ length: PRIVATE_ONLY }, (_, j) => seed(SUMMARIES + j, owners[j % OWNERS]!, 'generated', later(), j)),
    ...Array.from({ length: FAILED }, (_, j) => seed(SUMMARIES + PRIVATE_ONLY + j, null, 'failed', later(), j)),
    ...Array.from({ length: GENERATING }, (_, j) => seed(SUMMARIES + PRIVATE_ONLY + FAILED + j, null, 'generating', later(), j)),
  ];
  const throughTrigger = Math.min(SUMMARIES, MULTI_STORE + SINGLE_STORES);
  const single = publicReady.slice(SUMMARIES - Math.min(SUMMARIES, SINGLE_STORES));
  const multi = publicReady.slice(SUMMARIES - throughTrigger, SUMMARIES - single.length);
  const plain = publicReady.slice(Math.max(0, SUMMARIES - throughTrigger - SINGLE_PLAIN), SUMMARIES - throughTrigger);
  const bulk = [...publicReady.slice(0, SUMMARIES - throughTrigger - plain.length), ...others].sort((a, b) => a.at - b.at);
  // has_summary as the trigger would have left it for the summaries that bypass it.
  const hasSummary = new Uint8Array(videoCount);
  for (const row of [...bulk, ...plain]) if (row.status === 'generated' && row.owner === null) hasSummary[row.video] = 1;

  await sql`
    insert into channels (channel_id, title, subscriber_count)
    select * from unnest(${channelIds}::text[], ${channelIds.map(() => title(2))}::text[], ${channelIds.map(() => Math.floor(rnd() * 1e6))}::bigint[])`;
  for (let batch = 0; batch < videoCount; batch += INSERT_BATCH) {
    const indexes = Array.from({ length: Math.min(INSERT_BATCH, videoCount - batch) }, (_, i) => batch + i);
    await sql`
      insert into videos (video_id, channel_id, title, duration_seconds, view_count, upload_date, language, status, has_summary)
      select id, channel, title, duration, views, day, language, 'live', summary = 't'
      from unnest(${indexes.map((i) => corpusVideoId(SEED, i))}::text[], ${indexes.map((i) => channelIds[videoChannel[i]!]!)}::text[],
        ${indexes.map(() => title(4 + Math.floor(rnd() * 6)))}::text[], ${indexes.map(() => 60 + Math.floor(rnd() * 3600))}::int[],
        ${indexes.map(() => Math.floor(rnd() ** 3 * 1e7))}::bigint[], ${indexes.map(() => new Date(Date.UTC(2015, 0, 1) + rnd() * 3.5e11).toISOString().slice(0, 10))}::date[],
        ${indexes.map((i) => channelLanguage[videoChannel[i]!]!)}::text[], ${indexes.map((i) => (hasSummary[i] ? 't' : 'f'))}::text[])
        as x(id, channel, title, duration, views, day, language, summary)`;
  }
  const channelsAndVideos = secondsSince(started);
  ctx.progress(
    `${CHANNELS.toLocaleString('en')} channels and ${videoCount.toLocaleString('en')} videos in ${round(channelsAndVideos, 1)} s`,
  );

  const texts = {
    tldrs: templates.map((t) => t.tldr),
    points: templates.map((t) => JSON.stringify(t.keyPoints)),
    details: templates.map((t) => t.detailedSummary),
  };
  const template = (row: SummarySeed) => templates[row.k - 1]!;
  await sql`alter table summaries disable trigger summaries_counts, disable trigger summaries_list_entries`;
  const bulkStarted = performance.now();
  for (let batch = 0; batch < bulk.length; batch += INSERT_BATCH)
    await insertSummaries(sql, bulk.slice(batch, batch + INSERT_BATCH), texts);
  const bulkSummaries = secondsSince(bulkStarted);
  const plainLatencies: number[] = [];
  const plainStarted = performance.now();
  for (const row of plain) {
    const begun = performance.now();
    await storeSummary(sql, row, template(row));
    plainLatencies.push(performance.now() - begun);
  }
  const withoutTrigger = storeTiming(plainLatencies, secondsSince(plainStarted));
  const facetsStarted = performance.now();
  await sql.unsafe(`insert into summary_facets (facet, language, value, count) ${FACET_RECOUNT}`);
  await sql.unsafe(`insert into summary_list_entries ${LIST_ENTRIES_RECOUNT}`);
  await sql`alter table summaries enable trigger summaries_counts, enable trigger summaries_list_entries`;
  const facets = secondsSince(facetsStarted);
  ctx.progress(
    `${bulk.length.toLocaleString('en')} summaries in ${round(bulkSummaries, 1)} s without the counts and list triggers, their counts and list entries in ${round(facets, 1)} s`,
  );

  // The statistics a live database would have before the newest summaries arrive.
  let vacuumAnalyze = 0;
  const vacuum = async () => {
    const begun = performance.now();
    for (const table of ['summaries', 'summary_facets', 'summary_list_entries', 'videos']) await sql.unsafe(`vacuum analyze ${table}`);
    await sql`analyze channels`;
    vacuumAnalyze += secondsSince(begun);
  };
  await vacuum();
  const multiStarted = performance.now();
  if (multi.length > 0) await insertSummaries(sql, multi, texts);
  const multiSeconds = secondsSince(multiStarted);
  const singleLatencies: number[] = [];
  const singleStarted = performance.now();
  for (const row of single) {
    const begun = performance.now();
    await storeSummary(sql, row, template(row));
    singleLatencies.push(performance.now() - begun);
  }
  const withTrigger = storeTiming(singleLatencies, secondsSince(singleStarted));
  ctx.progress(
    `through the counts trigger: ${multi.length} summaries in one INSERT in ${round(multiSeconds, 1)} s; ${single.length} stored one at a time, median ${withTrigger.medianMs} ms (${withoutTrigger.medianMs} ms without the trigger)`,
  );
  await vacuum();

  // What the trigger kept, against a recount from the table, and the listing's invariants.
  const checks: string[] = [];
  const [counts] = await sql<
    { publicReady: number; private: number; failed: number; generating: number; hasSummary: number; facets: number; languageSum: number }[]
  >`
    select
      (select count(*)::int from summaries where status = 'generated' and not private) as "publicReady",
      (select count(*)::int from summaries where private) as private,
      (select count(*)::int from summaries where status = 'failed') as failed,
      (select count(*)::int from summaries where status = 'generating') as generating,
      (select count(*)::int from videos where has_summary) as "hasSummary",
      (select count(*)::int from summary_facets) as facets,
      (select coalesce(sum(count), 0)::int from summary_facets where facet = 'language') as "languageSum"`;
  const [drift] = await sql.unsafe<{ differing: number }[]>(`
    with recount as (${FACET_RECOUNT})
    select count(*)::int as differing from (
      (select facet, language, value, count from recount except select facet, language, value, count from summary_facets)
      union all
      (select facet, language, value, count from summary_facets except select facet, language, value, count from recount)) d`);
  if (counts!.publicReady !== SUMMARIES) checks.push(`${counts!.publicReady} public ready summaries stored, ${SUMMARIES} meant`);
  if (counts!.hasSummary !== SUMMARIES)
    checks.push(`videos.has_summary is true for ${counts!.hasSummary} videos, ${SUMMARIES} have a public ready summary`);
  if (counts!.languageSum !== SUMMARIES) checks.push(`the language counts add up to ${counts!.languageSum}, not ${SUMMARIES}`);
  if (drift!.differing > 0) checks.push(`${drift!.differing} summary_facets rows differ from a recount of the table`);
  const [entriesDrift] = await sql.unsafe<{ differing: number }[]>(`
    select count(*)::int as differing from (
      (${LIST_ENTRIES_RECOUNT} except select * from summary_list_entries)
      union all
      (select * from summary_list_entries except ${LIST_ENTRIES_RECOUNT})) d`);
  if (entriesDrift!.differing > 0) checks.push(`${entriesDrift!.differing} summary_list_entries rows differ from the table's summaries`);
  const [size] = await sql<{ table: number; indexes: number; facets: number; listEntries: number }[]>`
    select pg_table_size('summaries')::float8 as table, pg_indexes_size('summaries')::float8 as indexes, pg_total_relation_size('summary_facets')::float8 as facets,
      pg_total_relation_size('summary_list_entries')::float8 as "listEntries"`;
  return {
    seconds: {
      channelsAndVideos: round(channelsAndVideos, 1)!,
      bulkSummaries: round(bulkSummaries, 1)!,
      facets: round(facets, 1)!,
      vacuumAnalyze: round(vacuumAnalyze, 1)!,
      total: round(secondsSince(started), 1)!,
    },
    rows: {
      channels: CHANNELS,
      videos: videoCount,
      publicReady: counts!.publicReady,
      private: counts!.private,
      failed: counts!.failed,
      generating: counts!.generating,
      facets: counts!.facets,
    },
    bulkSummariesPerSecond: Math.round(bulk.length / bulkSummaries),
    stored: {
      withoutTrigger,
      withTrigger,
      multiRowWithTrigger: { rows: multi.length, seconds: round(multiSeconds, 2)!, perSecond: Math.round(multi.length / multiSeconds) },
    },
    sizeMiB: {
      summaries: round(size!.table / 2 ** 20, 0)!,
      summariesIndexes: round(size!.indexes / 2 ** 20, 0)!,
      facets: round(size!.facets / 2 ** 20, 0)!,
      listEntries: round(size!.listEntries / 2 ** 20, 0)!,
    },
    averageTags: round(tagTotal / SUMMARIES, 1)!,
    checks,
  };
}

// ---------------------------------------------------------------------------------------------------
// Part 3: reading at scale — the query mix
