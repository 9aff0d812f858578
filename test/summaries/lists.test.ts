import postgres, { type PendingQuery, type Row } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../core/db/database.ts';
import { browseSummaries, type BrowseFilters } from '../../core/summaries/browseSummaries.ts';
import { findSummary } from '../../core/summaries/findSummary.ts';
import { listOwnSummaries } from '../../core/summaries/listOwnSummaries.ts';
import { sitemapEntries } from '../../core/summaries/sitemapEntries.ts';
import { summaryChannels } from '../../core/summaries/summaryFacets.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';
import { random } from '../kit/random.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// The lists read summary_list_entries (sql/037), kept by a trigger; they must answer what the summaries
// table itself says, in the same order, ties included: the old queries, run on summaries, are the oracle.
let db: TestDatabase;
let sql: Sql;
const channels = [0, 1, 2].map((i) => fakeChannelId(`lists-${i}`));
const TAGS = ['lathe', 'bread', 'metal', 'wood', 'rust'];
const LANGUAGES = ['en', 'en', 'en', 'fr', 'fr', 'ja'];
const SUMMARIES = 240;
let owners: string[];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sql;
  owners = (
    await sql<
      { id: string }[]
    >`insert into users (email, tier) select 'lists-' || g || '@example.org', 'registered' from generate_series(1, 2) g returning id::text`
  ).map((row) => row.id);
  await sql`insert into channels (channel_id, title) select unnest(${channels}::text[]), 'Channel'`;
  const rnd = random(37);
  const rows = Array.from({ length: SUMMARIES }, (_, i) => {
    const u = rnd();
    const status = u < 0.06 ? 'failed' : u < 0.12 ? 'generating' : 'generated';
    return {
      video: fakeVideoId(`lists-${i}`),
      // Most in the first channel, a few in the last.
      channel: channels[rnd() < 0.6 ? 0 : rnd() < 0.8 ? 1 : 2]!,
      owner: status === 'generated' && rnd() < 0.1 ? owners[i % 2]! : null,
      status,
      tags: `{${TAGS.filter(() => rnd() < 0.35).join(',')}}`,
      language: LANGUAGES[Math.floor(rnd() * LANGUAGES.length)]!,
      // Twelve distinct times: ties everywhere, ordered by id within one.
      minute: Math.floor(rnd() * 12),
    };
  });
  await sql`
    insert into videos (video_id, channel_id, title, status)
    select video, channel, 'Video ' || video, 'live' from unnest(${rows.map((r) => r.video)}::text[], ${rows.map((r) => r.channel)}::text[]) as x(video, channel)`;
  // Ids rise in the order of this shuffled list, not with the times.
  await sql`
    insert into summaries (video_id, channel_id, owner_id, private, status, error, title, tldr, key_points, detailed_summary, tags, language, llm_model, requested_at, generated_at)
    select video, channel, owner, owner is not null, status, case when status = 'failed' then 'broke' end,
      case when status = 'generated' then 'T' end, case when status = 'generated' then 'tl;dr' end, case when status = 'generated' then '[]'::jsonb end,
      case when status = 'generated' then 'D' end, case when status = 'generated' then tags::text[] else '{}' end,
      case when status = 'generated' then language end, case when status = 'generated' then 'afterimage-extractive-1' end,
      '2026-01-01'::timestamptz + (minute || ' minutes')::interval,
      case when status = 'generated' then '2026-01-02'::timestamptz + (minute || ' minutes')::interval end
    from unnest(${rows.map((r) => r.video)}::text[], ${rows.map((r) => r.channel)}::text[], ${rows.map((r) => r.owner)}::uuid[],
      ${rows.map((r) => r.status)}::text[], ${rows.map((r) => r.tags)}::text[], ${rows.map((r) => r.language)}::text[], ${rows.map((r) => r.minute)}::int[])
      as x(video, channel, owner, status, tags, language, minute)`;
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** The browse page and total as the summaries table says them: the query browseSummaries ran before sql/037. */
async function fromSummaries(filters: BrowseFilters, page: { offset: number; limit: number }) {
  const { tag = null, channelId = null, language = null } = filters;
  const where = sql`s.status = 'generated' and not s.private and (${tag}::text is null or s.tags @> array[${tag}]::text[])
    and (${channelId}::text is null or s.channel_id = ${channelId}) and (${language}::text is null or s.language = ${language})`;
  const rows = await sql<{ video_id: string }[]>`
    select s.video_id from summaries s where ${where} order by s.generated_at desc, s.id desc limit ${page.limit} offset ${page.offset}`;
  const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from summaries s where ${where}`;
  return { ids: rows.map((row) => row.video_id), total: count };
}

const PAGES = [
  { offset: 0, limit: 100 },
  { offset: 0, limit: 7 },
  { offset: 7, limit: 7 },
  { offset: 35, limit: 7 },
  { offset: 500, limit: 20 },
];

/** Every combination of filters the API accepts (a tag, a channel, a language, each or not), over several pages. */
async function expectBrowseAsSummariesSay() {
  let compared = 0;
  for (const tag of [undefined, 'lathe', 'rust', 'new', 'never-used'])
    for (const channelId of [undefined, channels[0]!, channels[2]!])
      for (const language of [undefined, 'en', 'ja']) {
        const filters: BrowseFilters = { ...(tag ? { tag } : {}), ...(channelId ? { channelId } : {}), ...(language ? { language } : {}) };
        for (const page of PAGES) {
          const { rows, total } = await browseSummaries(sql, filters, page);
          const expected = await fromSummaries(filters, page);
          expect({ filters, page, ids: rows.map((row) => row.video_id), total }).toEqual({ filters, page, ...expected });
          if (expected.ids.length > 0) compared += 1;
        }
      }
  // Most pages hold summaries (the deep ones and the unused tag's are empty on purpose): empty pages alone would prove little.
  expect(compared).toBeGreaterThan(60);
}

describe('summary lists against the summaries table', () => {
  it('browse gives the same pages and totals for every combination of filters, ties ordered by id', async () => {
    const [{ ties }] = await sql<[{ ties: number }]>`
      select count(*)::int as ties from (select generated_at from summaries where status = 'generated' and not private group by 1 having count(*) > 1) t`;
    expect(ties).toBeGreaterThan(5);
    await expectBrowseAsSummariesSay();
  });

  it('follow every change of a summary: regenerated, tags and language changed, made private, failed, deleted, finished', async () => {
    const pick = async (where: PendingQuery<Row[]>) =>
      (await sql<{ id: string }[]>`select id::text from summaries s where ${where} order by id limit 1`)[0]!.id;
    const publicOne = sql`s.status = 'generated' and not s.private`;
    // Regenerated: its tags, language and time change at once.
    await sql`update summaries set tags = '{rust,new}', language = 'ja', generated_at = '2026-01-02 00:05' where id = ${await pick(publicOne)}`;
    await sql`update summaries set private = true, owner_id = ${owners[0]!} where id = ${await pick(sql`${publicOne} and s.id > 10`)}`;
    await sql`update summaries set status = 'failed', error = 'broke' where id = ${await pick(sql`${publicOne} and s.id > 20`)}`;
    await sql`delete from summaries where id = ${await pick(sql`${publicOne} and s.id > 30`)}`;
    // Progress on a generating one lists nothing; finishing it lists it with its tags.
    const generating = await pick(sql`s.status = 'generating'`);
    await sql`update summaries set progress = '{"stage": "chunk", "percent": 40}' where id = ${generating}`;
    await sql`
      update summaries set status = 'generated', title = 'T', tldr = 'tl;dr', key_points = '[]', detailed_summary = 'D', tags = '{lathe,new}',
        language = 'en', llm_model = 'afterimage-extractive-1', generated_at = '2026-01-02 00:03' where id = ${generating}`;
    // Tags set to the same value: nothing to rewrite, and nothing lost.
    await sql`update summaries set tags = tags where status = 'generated'`;
    await expectBrowseAsSummariesSay();
    const [{ orphans }] = await sql<[{ orphans: number }]>`
      select count(*)::int as orphans from summary_list_entries e join summaries s on s.id = e.summary_id where s.status <> 'generated' or s.private`;
    expect(orphans).toBe(0);
  });

  it('keep the tag, language and channel counts equal to a recount of the summaries table after every change', async () => {
    const counted = await sql<{ facet: string; language: string; value: string; count: number }[]>`
      select facet, language, value, count from summary_facets order by 1, 2, 3`;
    const recounted = await sql<{ facet: string; language: string; value: string; count: number }[]>`
      select facet, language, value, count(*)::int as count from (
        select 'language' as facet, '' as language, s.language as value from summaries s where s.status = 'generated' and not s.private
        union all select 'tag', s.language, t.tag from summaries s cross join unnest(s.tags) t(tag) where s.status = 'generated' and not s.private
        union all select 'tag', '', t.tag from summaries s cross join unnest(s.tags) t(tag) where s.status = 'generated' and not s.private
        union all select 'channel', '', s.channel_id from summaries s where s.status = 'generated' and not s.private) r
      group by 1, 2, 3 order by 1, 2, 3`;
    expect(recounted.length).toBeGreaterThan(20);
    expect(counted).toEqual(recounted);
  });

  it('channels, the sitemap and a user’s own summaries come in the order the summaries table gives', async () => {
    const byChannel = await sql<{ channelId: string; summaries: number }[]>`
      select channel_id as "channelId", count(*)::int as summaries from summaries where status = 'generated' and not private
      group by 1 order by 2 desc, 1`;
    for (const page of [
      { offset: 0, limit: 2 },
      { offset: 1, limit: 50 },
    ]) {
      const { rows, total } = await summaryChannels(sql, page);
      expect({ rows: rows.map(({ channelId, summaries }) => ({ channelId, summaries })), total }).toEqual({
        rows: byChannel.slice(page.offset, page.offset + page.limit),
        total: byChannel.length,
      });
    }
    const oldestFirst = await sql<{ video_id: string }[]>`
      select video_id from summaries where status = 'generated' and not private order by generated_at, id`;
    expect((await sitemapEntries(sql, 1)).map((entry) => entry.videoId)).toEqual(oldestFirst.map((row) => row.video_id));
    for (const owner of owners) {
      const newestRequested = await sql<{ video_id: string }[]>`
        select video_id from summaries where owner_id = ${owner} and private order by requested_at desc, id desc`;
      expect(newestRequested.length).toBeGreaterThan(1);
      expect((await listOwnSummaries(sql, owner)).map((summary) => summary.videoId)).toEqual(newestRequested.map((row) => row.video_id));
    }
  });

  it('a list reads none of the long columns a whole summary reads', async () => {
    // Each statement as Postgres plans it: the long columns its answer carries are read (and detoasted);
    // its scans output whole rows unread, so only the statement's own output tells.
    const statements: Array<{ query: string; parameters: unknown[] }> = [];
    const url = new URL(db.url);
    const socketDir = url.searchParams.get('host');
    url.searchParams.delete('host');
    const watched = postgres(url.toString(), {
      ...(socketDir ? { host: socketDir } : {}),
      max: 1,
      debug: (_, query, parameters) => statements.push({ query, parameters }),
    });
    const long = ['key_points', 'detailed_summary'];
    const longColumnsRead = async (read: (sql: Sql) => Promise<unknown>) => {
      statements.length = 0;
      await read(watched as unknown as Sql);
      const output: string[] = [];
      for (const { query, parameters } of statements) {
        const [explained] = await sql.unsafe<[{ 'QUERY PLAN': [{ Plan: { Output: string[] } }] }]>(
          `explain (verbose, format json) ${query}`,
          parameters as never[],
        );
        output.push(...explained['QUERY PLAN'][0].Plan.Output);
      }
      return long.filter((column) => output.some((expression) => expression.includes(`s.${column}`)));
    };
    try {
      const [{ videoId }] = await sql<[{ videoId: string }]>`
        select video_id as "videoId" from summaries where status = 'generated' and not private limit 1`;
      expect(await longColumnsRead((watchedSql) => findSummary(watchedSql, videoId, { userId: null }))).toEqual(long);
      for (const filters of [{}, { tag: 'lathe' }, { channelId: channels[0]!, language: 'en' }])
        expect(await longColumnsRead((watchedSql) => browseSummaries(watchedSql, filters, { offset: 0, limit: 20 }))).toEqual([]);
    } finally {
      await watched.end();
    }
  });
});
