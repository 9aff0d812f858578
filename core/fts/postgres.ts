import type { PendingQuery, Row } from 'postgres';
import type { Queryable, Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { FtsFilters, FtsPage, FtsRequest, FtsSort, SearchBackend } from './backend.ts';
import { estimateMatches, planStatistics } from './estimate.ts';
import { formatQuery, type FtsQuery, type Term } from './query.ts';
import { videoJsonOf, toVideoJson, type PositionedVideoJson } from '../videos/loadVideos.ts';

export type Fragment = PendingQuery<Row[]>;
/** A video of a page: its id, and its stored video when the request wants them (withVideos). */
type PageRow = { videoId: string } & Partial<PositionedVideoJson>;
interface RankedHead {
  pool: number;
  rows: number;
}

/**
 * A query matching at most this many videos is answered from all its matches (read through the GIN index,
 * sorted in memory, relevance exact). A broader one matches at least 1 % of a million-video archive, so
 * walking the index of the requested order and filtering finds a page after reading a bounded number of rows.
 */
const ALL_MATCHES_CAP = 10_000;
/** A broad query under relevance ranks at most this many of its most viewed matches; further pages follow by views. */
const RANKED_POOL = 1_000;
const MIN_RANKED_POOL = 100;
/** Title matches weigh most, then tags, then the description ({D, C, B, A} as ts_rank takes them). */
const WEIGHTS = '{0.05, 0.2, 0.5, 1.0}';
/**
 * A query the planner expects to be broad first walks at most this many rows of the requested order: three
 * times what its estimated share of the archive needs to fill the page. Estimates multiply word frequencies,
 * so a phrase of two common words looks broad when it is rarer; its walk comes up short, is retried longer,
 * and past WALK_LONGEST the all-matches path answers instead.
 */
const WALK_MAX_ROWS = 20_000;
/**
 * Relevance ranks a broad query's matches among at most this many of the archive's most viewed videos: a
 * phrase rarer than its estimate ranks the fewer matches found there rather than walking further.
 */
const RANK_WALK_ROWS = 5_000;
const WALK_MARGIN = 3;
/** A walk that comes up short is retried eight times as long, up to this many rows. */
const WALK_LONGEST = 160_000;
/** A first walk this short runs outside a transaction, unforced: the planner walks the order's index for it. */
const WALK_FIRST_ROWS = 20_000;

export const ORDER: Record<Exclude<FtsSort, 'relevance'>, string> = {
  'date-desc': 'upload_date desc nulls last, view_count desc nulls last, video_id',
  'date-asc': 'upload_date asc nulls last, view_count desc nulls last, video_id',
  'duration-desc': 'duration_seconds desc nulls last, view_count desc nulls last, video_id',
  'duration-asc': 'duration_seconds asc nulls last, view_count desc nulls last, video_id',
};
const BY_VIEWS = 'view_count desc nulls last, video_id';
const RANKED = `ts_rank('${WEIGHTS}', fts, q, 1) desc, ${BY_VIEWS}`;

const join = (sql: Queryable, parts: Fragment[], operator: string): Fragment =>
  parts.reduce((joined, part) => sql`${joined} ${sql.unsafe(operator)} ${part}`);

/** The tsquery matching any of `terms`, folded in SQL exactly as the documents are (sql/009_full_text_search.sql). */
export const anyTerm = (sql: Queryable, terms: Term[]): Fragment =>
  sql`(${join(
    sql,
    terms.map((t) => sql`phraseto_tsquery('afterimage', fts_fold(${t.text}))`),
    '||',
  )})`;

/** The tsquery of a parsed query: every group, none of the exclusions. */
function tsquery(sql: Queryable, query: FtsQuery): Fragment {
  const groups = query.groups.map((group) => anyTerm(sql, group));
  const excluded = query.excluded.map((t) => sql`!! ${anyTerm(sql, [t])}`);
  return join(sql, [...groups, ...excluded], '&&');
}

export function filterClause(sql: Queryable, filters: FtsFilters): Fragment {
  const conditions: Fragment[] = [];
  if (filters.status === 'live') conditions.push(sql`status = 'live'`);
  if (filters.status === 'deleted') conditions.push(sql`status in ('deleted', 're-uploaded')`);
  if (filters.hasVideo !== undefined) conditions.push(sql`has_video = ${filters.hasVideo}`);
  if (filters.hasSubtitles !== undefined) conditions.push(sql`has_subtitles = ${filters.hasSubtitles}`);
  if (filters.hasSummary !== undefined) conditions.push(sql`has_summary = ${filters.hasSummary}`);
  return conditions.length === 0 ? sql`true` : join(sql, conditions, 'and');
}

const isStatementTimeout = (error: unknown) => (error as { code?: string }).code === '57014';

export interface PostgresBackendOptions {
  sql: Sql;
  timeoutMs: number;
  /** Tuning (tests set them to take every plan on a small archive). */
  allMatchesCap?: number;
  rankedPool?: number;
  rankWalkRows?: number;
}

/** Postgres full-text search over the `fts` column of videos; every query runs under a statement timeout. */
export function createPostgresBackend({
  sql,
  timeoutMs,
  allMatchesCap = ALL_MATCHES_CAP,
  rankedPool = RANKED_POOL,
  rankWalkRows = RANK_WALK_ROWS,
}: PostgresBackendOptions): SearchBackend {
  const statistics = planStatistics(sql);
  async function search(request: FtsRequest): Promise<FtsPage> {
    const { sort, offset, limit } = request;
    const q = tsquery(sql, request.query);
    const matches = sql`fts @@ (${q}) and ${filterClause(sql, request.filters)}`;
    /** The matches in `order`, walking its index: `rows` bounds the rows read (null: as many as the limit needs). */
    const inOrder = (tx: Queryable, order: string, rows: number | null) =>
      rows === null
        ? tx`videos where ${matches} order by ${tx.unsafe(order)}`
        : tx`(select * from videos order by ${tx.unsafe(order)} limit ${rows}) walked where ${matches} order by ${tx.unsafe(order)}`;
    /** The rows of a page whose ids `ids` (a text[] expression) holds in order, with their videos when wanted. */
    const pageRows = (tx: Queryable, ids: Fragment) =>
      request.withVideos
        ? videoJsonOf(tx, ids)
        : tx`select video_id as "videoId", position from unnest(${ids}) with ordinality as wanted (video_id, position)`;
    const walk = (tx: Queryable, order: string, from: number, count: number, rows: number | null) => tx<PageRow[]>`
      ${pageRows(tx, tx`array(select video_id from (select video_id from ${inOrder(tx, order, rows)} offset ${from} limit ${count}) page)`)}`;
    /**
     * The ranked head of a broad query: its first `pool` matches by views among the `rows` most viewed videos,
     * by relevance; answered as its length and the rows of the page that fall in it. Read once per search:
     * longer walks for the matches after it do not change it.
     */
    let ranked: Promise<{ length: number; rows: PageRow[] }> | undefined;
    const rankHead = (tx: Queryable, { pool, rows }: RankedHead) =>
      (ranked ??= tx<Array<{ headLength: number } & Partial<PageRow>>>`
        with head as materialized (
          select video_id, row_number() over (order by ${tx.unsafe(RANKED)}) as position
          from (select video_id, view_count, fts from ${inOrder(tx, BY_VIEWS, rows)} limit ${pool}) pool, (select ${q} as q) query
        )
        select (select count(*)::int from head) as "headLength", page.* from (values (1)) one left join lateral (
          ${pageRows(tx, tx`array(select video_id from head where position > ${offset} and position <= ${offset + limit} order by position)`)}
        ) page on true
        order by page.position`.then((found) => ({
        length: found[0]!.headLength,
        rows: found[0]!.videoId === null ? [] : (found as PageRow[]),
      })));
    /**
     * The page of a broad query, or null when a bounded walk (`rows`) did not find enough matches to fill it.
     * Under relevance the ranked head comes first (all its matches, however few the head's walk found), then
     * the matches after it by views. A page inside the head, or past it, is one statement.
     */
    async function broadPage(tx: Queryable, head: RankedHead, rows: number | null): Promise<PageRow[] | null> {
      const end = offset + limit;
      if (sort !== 'relevance') {
        const page = await walk(tx, ORDER[sort], offset, limit, rows);
        return rows !== null && page.length < limit ? null : page;
      }
      const ranks = await rankHead(tx, head);
      const from = Math.max(offset, ranks.length);
      const rest = end > ranks.length ? await walk(tx, BY_VIEWS, from, end - from, rows) : [];
      if (rows !== null && end > ranks.length && rest.length < end - from) return null;
      return [...ranks.rows, ...rest];
    }
    /** A page of a broad query: its estimated total, and its videos when they were read with it. */
    const broadResult = (page: PageRow[], total: number): FtsPage => ({
      videoIds: page.map((row) => row.videoId),
      total,
      totalExact: false,
      ...(request.withVideos ? { videos: (page as PositionedVideoJson[]).map(toVideoJson) } : {}),
    });
    /**
     * The ranked head of a broad query under relevance: its first matches by views, up to `rankedPool` (fewer
     * when its matches are sparser) among at most `rankWalkRows` of the most viewed videos: a bounded walk.
     * It depends only on the query and the statistics, so every page of a query sees the same head.
     */
    const headFor = (estimate: number, videos: number): RankedHead => {
      const share = Math.max(estimate, allMatchesCap + 1) / Math.max(videos, 1);
      const pool = Math.min(rankedPool, Math.max(MIN_RANKED_POOL, Math.floor((rankWalkRows * share) / WALK_MARGIN)));
      return { pool, rows: Math.min(rankWalkRows, Math.ceil((WALK_MARGIN * pool) / share)) };
    };

    /**
     * All matches, when at most the cap: one statement, which also reads the page's videos when they are
     * wanted (one round trip for the whole page); null when there are more.
     */
    async function allMatches(tx: Queryable): Promise<FtsPage | null> {
      const rows = await tx<Array<{ total: number; ids?: string[] | null } & Partial<PositionedVideoJson>>>`
        with m as materialized (
          select video_id, view_count, upload_date, duration_seconds, ${sort === 'relevance' ? tx`ts_rank(${tx.unsafe(`'${WEIGHTS}'`)}, fts, ${q}, 1)` : tx`0`} as rank
          from videos where ${matches} limit ${allMatchesCap + 1}
        ), found as (
          select (select count(*)::int from m) as total,
            (select array_agg(video_id) from (
              select video_id from m order by ${tx.unsafe(sort === 'relevance' ? `rank desc, ${BY_VIEWS}` : ORDER[sort])} offset ${offset} limit ${limit}) page) as ids
        )
        ${
          request.withVideos
            ? tx`select found.total, page.* from found left join lateral (
                ${videoJsonOf(tx, tx`case when found.total <= ${allMatchesCap} then found.ids end`)}) page on true
              order by page.position`
            : tx`select total, ids from found`
        }`;
      const [first] = rows;
      if (first!.total > allMatchesCap) return null;
      if (!request.withVideos) return { videoIds: first!.ids ?? [], total: first!.total, totalExact: true };
      // Each row is a video of the page; a page without any is one row of nulls.
      const videos = first!.videoId === null ? [] : (rows as PositionedVideoJson[]).map(toVideoJson);
      return { videoIds: videos.map((video) => video.videoId), total: first!.total, totalExact: true, videos };
    }
    /** The ranked head (relevance), and the rows a first walk reads to fill the page. */
    const planFor = (estimate: number, videos: number) => ({
      head: headFor(estimate, videos),
      rows: Math.ceil((WALK_MARGIN * (offset + limit) * videos) / Math.max(estimate, 1)),
    });
    /**
     * The careful plans, in a transaction whose settings force each one: bounded walks, longer and longer,
     * then all matches, then an unbounded walk. `tried` skips what was already tried outside it.
     */
    async function planned(
      tx: Queryable,
      estimate: number,
      videos: number,
      tried: { walk: boolean; allMatches: boolean },
    ): Promise<FtsPage> {
      await tx.unsafe(`set local statement_timeout = ${timeoutMs}; set local enable_seqscan = off; set local enable_bitmapscan = off`);
      const { head, rows } = planFor(estimate, videos);
      // A walk that comes up short was misled by the estimate (phrases of common words are rarer than
      // their words); a longer one still reads fewer rows than rechecking every video with both words.
      for (
        let budget = tried.walk ? rows * 8 : rows;
        estimate > allMatchesCap && rows <= WALK_MAX_ROWS && budget <= WALK_LONGEST;
        budget *= 8
      ) {
        const page = await broadPage(tx, head, budget);
        if (page) return broadResult(page, estimate);
      }
      if (!tried.allMatches) {
        await tx.unsafe('set local enable_bitmapscan = on; set local enable_indexscan = off');
        const few = await allMatches(tx);
        if (few) return few;
      }
      await tx.unsafe('set local enable_indexscan = on; set local enable_bitmapscan = off');
      return broadResult((await broadPage(tx, head, null))!, Math.max(allMatchesCap + 1, estimate));
    }

    try {
      // Plans are chosen here, by the estimate and then the exact match count, never left to the planner
      // alone: a rare pair of common words defeats its estimates.
      const stats = await statistics();
      if (!stats) {
        return await sql.begin(async (tx) => {
          const { estimate, videos } = await askPlanner(tx, matches);
          return planned(tx, estimate, videos, { walk: false, allMatches: false });
        });
      }
      // The first try is one statement outside any transaction (one round trip): all matches of a rare
      // query, or a short walk of a broad one. Neither needs forcing: a GIN index is read by bitmap, and the
      // walk's inner LIMIT of a few thousand rows is an index scan.
      const estimate = estimateMatches(stats, request.query, request.filters);
      const videos = Math.max(stats.videos, 1);
      const { head, rows } = planFor(estimate, videos);
      if (estimate <= allMatchesCap) {
        const few = await allMatches(sql);
        if (few) return few;
      } else if (rows <= WALK_FIRST_ROWS) {
        const page = await broadPage(sql, head, rows);
        if (page) return broadResult(page, estimate);
      }
      return await sql.begin((tx) =>
        planned(tx, estimate, videos, { walk: estimate > allMatchesCap && rows <= WALK_FIRST_ROWS, allMatches: estimate <= allMatchesCap }),
      );
    } catch (error) {
      if (!isStatementTimeout(error)) throw error;
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `the search took longer than ${timeoutMs} ms and was stopped; add words or filters to narrow it, or try again`,
      );
    }
  }

  async function suggest(query: FtsQuery, filters: FtsFilters): Promise<string | null> {
    let changed = false;
    const correct = async (term: Term): Promise<Term> => {
      const tokens = await Promise.all(term.tokens.map((token) => closestWord(sql, token)));
      if (tokens.every((token, index) => token === term.tokens[index])) return term;
      changed = true;
      return { text: tokens.join(' '), tokens };
    };
    const corrected: FtsQuery = {
      groups: await Promise.all(query.groups.map((group) => Promise.all(group.map(correct)))),
      excluded: query.excluded,
    };
    if (!changed) return null;
    const found = await search({ query: corrected, filters, sort: 'date-desc', offset: 0, limit: 1 });
    return found.total > 0 ? formatQuery(corrected) : null;
  }

  return { name: 'postgres', search, suggest, close: async () => {} };
}

/** The planner's estimate of a query's matches (counting them exactly would read them all), and of all videos: before ANALYZE. */
async function askPlanner(sql: Queryable, matches: Fragment): Promise<{ estimate: number; videos: number }> {
  // Sent together: one round trip.
  const [[plan], [table]] = await Promise.all([
    sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }[]>`explain (format json) select 1 from videos where ${matches}`,
    sql<{ videos: number }[]>`select greatest(reltuples, 0)::float8 as videos from pg_class where oid = 'videos'::regclass`,
  ]);
  return { estimate: Math.round(plan!['QUERY PLAN'][0]!.Plan['Plan Rows']), videos: table!.videos };
}

/** The token itself when the archive has it, else the most frequent similar word the archive has (pg_trgm). */
async function closestWord(sql: Sql, token: string): Promise<string> {
  const [row] = await sql<{ word: string }[]>`
    with folded as (select fts_fold(${token}) as token)
    select coalesce(
      (select word from fts_words, folded where word = folded.token),
      (select word from fts_words, folded where word % folded.token order by similarity(word, folded.token) desc, videos desc, word limit 1),
      ${token}) as word`;
  return row!.word;
}

/**
 * Brings the did-you-mean vocabulary up to date: words of the videos changed since the last refresh are
 * added (counts grow by their videos), or, the first time, every word is counted.
 */
export async function refreshSearchWords(sql: Sql): Promise<{ words: number; videos: number }> {
  return sql.begin(async (tx) => {
    const [state] = await tx<{ since: Date | null }[]>`select refreshed_at as since from fts_words_state for update`;
    const [{ now }] = await tx<[{ now: Date }]>`select now()`;
    const since = state?.since ?? null;
    const [counted] = await tx<{ videos: number }[]>`
      select count(*)::int as videos from videos where ${since ? tx`updated_at > ${since}` : tx`true`}`;
    const statement = `select fts from videos${since ? ` where updated_at > '${since.toISOString()}'` : ''}`;
    const inserted = await tx`
      insert into fts_words (word, videos)
      select word, ndoc from ts_stat(${statement}) where length(word) between 2 and 40
      on conflict (word) do update set videos = fts_words.videos + excluded.videos
      returning 1`;
    await tx`insert into fts_words_state (id, refreshed_at) values (true, ${now}) on conflict (id) do update set refreshed_at = excluded.refreshed_at`;
    return { words: inserted.count, videos: counted!.videos };
  });
}
