/**
 * Pages of the change log, newest first, each page the changes before a change id: a watchlist's (its
 * event stream, what its fan-out delivered to it) and the deletions, site-wide or of one channel.
 */
import type { Queryable } from '../db/database.ts';
import { DELETION_TYPES, type Change } from './change.ts';
import { watchlistStream } from './watchlistEvents.ts';

export interface ChangePage {
  changes: Change[];
  /** The id to page on from (the page's oldest change), when older ones exist. */
  nextBefore: string | null;
}

/** After every change id: the first page. */
const NEWEST = '9223372036854775807';

const pageOf = (changes: Change[], limit: number): ChangePage => ({
  changes: changes.slice(0, limit),
  nextBefore: changes.length > limit ? changes[limit - 1]!.id : null,
});

/**
 * A watchlist's changes before the change `before`, from its event stream: the changes as they were
 * fanned out to it, so the list, the live stream and the private feed show the same ones. The
 * `stream like` clause lets the planner use sql/045's index of watchlist streams by change id.
 */
export async function watchlistChangePage(
  sql: Queryable,
  watchlistId: string,
  before: string | undefined,
  limit: number,
): Promise<ChangePage> {
  const rows = await sql<{ payload: Change }[]>`
    select payload from events e
    where e.stream = ${watchlistStream(watchlistId)} and e.stream like 'watchlist:%'
      and (e.payload->>'id')::bigint < ${before ?? NEWEST}::bigint
    order by (e.payload->>'id')::bigint desc
    limit ${limit + 1}`;
  return pageOf(
    rows.map((row) => row.payload),
    limit,
  );
}

const DELETION_KINDS = DELETION_TYPES.map((type) => `'${type}'`).join(', ');

/**
 * A feed page before it is read: its changes' ids (newest first) and when the newest was logged. The
 * log is append-only, so these are all a feed's validators need: a revalidation that finds them the
 * same is a 304 without reading a change.
 */
export interface FeedPageKey {
  ids: string[];
  newestAt: Date | null;
  /** The id to page on from (the page's oldest change), when older ones exist. */
  nextBefore: string | null;
}

const keyOf = (rows: { id: string; recordedAt: Date }[], limit: number): FeedPageKey => ({
  ids: rows.slice(0, limit).map((row) => row.id),
  newestAt: rows[0]?.recordedAt ?? null,
  nextBefore: rows.length > limit ? rows[limit - 1]!.id : null,
});

/** Confirmed deletions (re-uploads too) before the change `before`, site-wide or of one channel. */
export async function deletionPageKey(
  sql: Queryable,
  options: { channelId?: string | undefined; before?: string | undefined; limit: number },
): Promise<FeedPageKey> {
  // The kinds are written out as the partial indexes' predicate is, so the planner uses them.
  const rows = await sql.unsafe<{ id: string; recordedAt: Date }[]>(
    `select c.id::text as id, c.recorded_at as "recordedAt" from changes c
     where c.kind in (${DELETION_KINDS}) and c.id < $1::bigint ${options.channelId ? 'and c.channel_id = $3' : ''}
     order by c.id desc
     limit $2`,
    [options.before ?? NEWEST, options.limit + 1, ...(options.channelId ? [options.channelId] : [])],
  );
  return keyOf(rows, options.limit);
}

/** A watchlist's changes before the change `before`, as its private feed pages them (its stream, as watchlistChangePage). */
export async function watchlistPageKey(
  sql: Queryable,
  watchlistId: string,
  before: string | undefined,
  limit: number,
): Promise<FeedPageKey> {
  const rows = await sql<{ id: string; recordedAt: Date }[]>`
    select e.payload->>'id' as id, (e.payload->>'recordedAt')::timestamptz as "recordedAt" from events e
    where e.stream = ${watchlistStream(watchlistId)} and e.stream like 'watchlist:%'
      and (e.payload->>'id')::bigint < ${before ?? NEWEST}::bigint
    order by (e.payload->>'id')::bigint desc
    limit ${limit + 1}`;
  return keyOf(rows, limit);
}

/** The q of each saved query, by id: what a new match's title quotes. */
export async function savedQueryTexts(sql: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; q: string }[]>`
    select id::text as id, coalesce(query->>'q', '') as q from saved_queries where id = any(${ids as string[]}::bigint[])`;
  return new Map(rows.map((row) => [row.id, row.q]));
}
