/**
 * Watchlists and their items as their owners keep them (sql/045_watchlists.sql): create, list, read,
 * rename, rotate the private feed, delete; watch a channel, a stored video or a saved full-text query.
 * api/actions/watchlists.ts performs these for REST, pages and MCP alike.
 */
import { z } from 'zod';
import { startSearch, resolveChannel } from '../crawl/startSearch.ts';
import { upsertChannel } from '../videos/upsertVideos.ts';
import type { Queryable, Sql } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { parseQuery } from '../fts/query.ts';
import type { Logger } from '../log.ts';
import type { ServerKey } from '../secrets/serverKey.ts';
import type { VideoSource } from '../sources/types.ts';
import { holdOneMore } from './allowances.ts';
import { findOwnWatchlist, WATCHLIST_COLUMNS, watchlistFeedPath, type WatchlistRow } from './ownWatchlist.ts';

const WATCHLIST_NAME_MAX = 100;

/**
 * Characters a name must not hold: controls (line breaks, escapes), line and paragraph separators,
 * bidirectional overrides and isolates (text that reads differently from what it is), a byte order
 * mark, and what Postgres cannot store (lone surrogates; NUL is a control).
 */
const HOSTILE = /[\p{Cc}\p{Cs}\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/u;

/** A watchlist's name as its owner gives it: trimmed, 1–100 characters, printable. */
export const watchlistName = z
  .string({ message: 'expected a name' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(WATCHLIST_NAME_MAX, { message: `at most ${WATCHLIST_NAME_MAX} characters` })
  .refine((name) => !HOSTILE.test(name), {
    message: 'must not contain control characters, line separators or bidirectional overrides',
  });

/** A saved full-text query as it is stored and shown: the input of GET /api/fts that says what matches (q, in, filters). */
export const savedQuerySchema = z.object({
  q: z.string(),
  in: z.enum(['videos', 'subtitles']),
  status: z.enum(['live', 'deleted']).optional(),
  hasVideo: z.boolean().optional(),
  hasSubtitles: z.boolean().optional(),
  hasSummary: z.boolean().optional(),
});
export type SavedQuery = z.infer<typeof savedQuerySchema>;

/**
 * The one form of a saved query, so the same question is saved once however it was written: q
 * checked as GET /api/fts checks it (400 naming q) with its spaces collapsed, filters not given left out.
 */
export function normaliseSavedQuery(query: SavedQuery): SavedQuery {
  parseQuery(query.q);
  const { q, in: where, ...filters } = query;
  const given = Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined));
  return { q: q.trim().replace(/\s+/g, ' '), in: where, ...given };
}

const watchlistItemKind = z.enum(['channel', 'video', 'query']);

export const watchlistItemSchema = z.object({
  id: z.string(),
  kind: watchlistItemKind,
  channelId: z.string().optional().describe('kind channel'),
  videoId: z.string().optional().describe('kind video'),
  query: savedQuerySchema.optional().describe('kind query: the saved query, as GET /api/fts takes it'),
  label: z.string().describe("the channel's name, the video's title, or the query's words"),
  addedAt: z.string().describe('ISO 8601'),
});
export type WatchlistItem = z.infer<typeof watchlistItemSchema>;

const watchlistFields = {
  id: z.string(),
  name: z.string(),
  createdAt: z.string().describe('ISO 8601'),
  updatedAt: z.string().describe('ISO 8601: the last rename, feed rotation, or item added or removed'),
  feedUrl: z
    .string()
    .describe(
      "the watchlist's private Atom feed: anyone with this URL can read it; rotate it (PATCH rotateFeed) and the old one answers 404",
    ),
};

/** A watchlist in a list of them. */
export const watchlistSummarySchema = z.object({ ...watchlistFields, itemCount: z.number().int() });
export type WatchlistSummary = z.infer<typeof watchlistSummarySchema>;

/** A watchlist with everything it watches, newest first. */
export const watchlistSchema = z.object({
  ...watchlistFields,
  items: z.array(watchlistItemSchema),
  counts: z.object({ items: z.number().int(), channels: z.number().int(), videos: z.number().int(), queries: z.number().int() }),
});
export type Watchlist = z.infer<typeof watchlistSchema>;

/** What presenting a watchlist needs: the server key (its feed's token) and the public origin (the feed's absolute URL). */
export interface Presenting {
  serverKey: ServerKey;
  origin: string;
}

const present = ({ serverKey, origin }: Presenting, row: WatchlistRow) => ({
  id: row.id,
  name: row.name,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  feedUrl: origin + watchlistFeedPath(serverKey, row),
});

/** The owner's watchlist or 404: another owner's is as unknown as a missing one. */
async function ownOrNotFound(sql: Queryable, ownerId: string, id: string, lock = false): Promise<WatchlistRow> {
  const row = await findOwnWatchlist(sql, ownerId, id, { lock });
  if (!row) throw notFound(`no watchlist ${id}`);
  return row;
}

/** The owner's watchlists, newest first, with how many items each holds (their allowance caps how many). */
export async function ownWatchlists(sql: Sql, presenting: Presenting, ownerId: string): Promise<WatchlistSummary[]> {
  const rows = await sql.unsafe<(WatchlistRow & { itemCount: number })[]>(
    `select ${WATCHLIST_COLUMNS}, (select count(*) from watchlist_items i where i.watchlist_id = w.id)::int as "itemCount"
     from watchlists w where w.owner_id = $1 order by w.created_at desc, w.id desc`,
    [ownerId],
  );
  return rows.map((row) => ({ ...present(presenting, row), itemCount: row.itemCount }));
}

const ITEM_COLUMNS = `i.id::text as id, i.kind, i.channel_id as "channelId", i.video_id as "videoId", q.query,
  case i.kind when 'channel' then coalesce(nullif(c.title, ''), i.channel_id)
    when 'video' then coalesce(nullif(v.title, ''), i.video_id) else q.query->>'q' end as label,
  to_json(i.created_at)#>>'{}' as "addedAt"`;
const ITEM_JOINS = `left join channels c on c.channel_id = i.channel_id
  left join videos v on v.video_id = i.video_id
  left join saved_queries q on q.id = i.saved_query_id`;

type ItemRow = {
  id: string;
  kind: WatchlistItem['kind'];
  channelId: string | null;
  videoId: string | null;
  query: SavedQuery | null;
  label: string;
  addedAt: string;
};

const presentItem = (row: ItemRow): WatchlistItem => ({
  id: row.id,
  kind: row.kind,
  ...(row.channelId ? { channelId: row.channelId } : {}),
  ...(row.videoId ? { videoId: row.videoId } : {}),
  ...(row.query ? { query: row.query } : {}),
  label: row.label,
  addedAt: row.addedAt,
});

async function itemsWhere(sql: Queryable, condition: string, values: string[]): Promise<WatchlistItem[]> {
  const rows = await sql.unsafe<ItemRow[]>(
    `select ${ITEM_COLUMNS} from watchlist_items i ${ITEM_JOINS} where ${condition} order by i.created_at desc, i.id desc`,
    values,
  );
  return rows.map(presentItem);
}

const withItems = (presenting: Presenting, row: WatchlistRow, items: WatchlistItem[]): Watchlist => ({
  ...present(presenting, row),
  items,
  counts: {
    items: items.length,
    channels: items.filter((item) => item.kind === 'channel').length,
    videos: items.filter((item) => item.kind === 'video').length,
    queries: items.filter((item) => item.kind === 'query').length,
  },
});

/** One of the owner's watchlists with its items; 404 for anyone else's. */
export async function watchlistWithItems(sql: Sql, presenting: Presenting, ownerId: string, id: string): Promise<Watchlist> {
  const row = await ownOrNotFound(sql, ownerId, id);
  return withItems(presenting, row, await itemsWhere(sql, 'i.watchlist_id = $1', [row.id]));
}

/** A new, empty watchlist, if the owner's tier allows one more (403 with the allowance's details otherwise). */
export async function insertWatchlist(sql: Sql, presenting: Presenting, ownerId: string, name: string): Promise<Watchlist> {
  const row = await sql.begin(async (tx) => {
    await holdOneMore(tx, ownerId, 'watchlists');
    const [created] = await tx.unsafe<WatchlistRow[]>(
      `insert into watchlists as w (owner_id, name) values ($1, $2) returning ${WATCHLIST_COLUMNS}`,
      [ownerId, name],
    );
    return created!;
  });
  return withItems(presenting, row, []);
}

/** Renames a watchlist and/or rotates its feed (the old feed URL stops answering at once). */
export async function changeWatchlist(
  sql: Sql,
  presenting: Presenting,
  ownerId: string,
  id: string,
  changes: { name?: string | undefined; rotateFeed?: boolean | undefined },
): Promise<Watchlist> {
  const [row] = (await findOwnWatchlist(sql, ownerId, id))
    ? await sql.unsafe<WatchlistRow[]>(
        `update watchlists w set name = coalesce($3, w.name), feed_version = w.feed_version + $4::int, updated_at = now()
     where w.id = $1 and w.owner_id = $2 returning ${WATCHLIST_COLUMNS}`,
        [id, ownerId, changes.name ?? null, changes.rotateFeed ? 1 : 0],
      )
    : [];
  if (!row) throw notFound(`no watchlist ${id}`);
  return watchlistWithItems(sql, presenting, ownerId, row.id);
}

/** Deletes a watchlist with its items, webhooks and event stream (their rows cascade); 404 for anyone else's. */
export async function removeWatchlist(sql: Sql, ownerId: string, id: string): Promise<void> {
  const deleted = (await findOwnWatchlist(sql, ownerId, id))
    ? await sql`delete from watchlists where id = ${id} and owner_id = ${ownerId} returning id`
    : [];
  if (deleted.length === 0) throw notFound(`no watchlist ${id}`);
}

export type NewWatchlistItem =
  | { kind: 'channel'; channelId: string }
  | { kind: 'video'; videoId: string }
  | { kind: 'query'; query: SavedQuery };

export interface WatchingDeps {
  sql: Sql;
  sources: VideoSource[];
  log: Logger;
  /** SOURCE_WAIT_BUDGET_MS: how long resolving an unknown channel waits on one source. */
  sourceWaitBudgetMs: number;
}

/**
 * Adds an item to the owner's watchlist; `created` false when it was there already (the existing
 * item is answered). A channel must be known to a source (404 otherwise); one never crawled is
 * crawled now, as a search would. A video must be stored (404 otherwise: searching its channel
 * stores it). A query is saved once, normalised, however many watchlists hold it.
 */
export async function watchItem(
  deps: WatchingDeps,
  ownerId: string,
  watchlistId: string,
  item: NewWatchlistItem,
): Promise<{ item: WatchlistItem; created: boolean }> {
  const { sql } = deps;
  // Resolving a channel may ask the sources: before any transaction, and not for another owner's watchlist.
  await ownOrNotFound(sql, ownerId, watchlistId);
  const channel =
    item.kind === 'channel'
      ? await resolveChannel(sql, deps.sources, { kind: 'channelId', channelId: item.channelId }, deps.log, deps.sourceWaitBudgetMs)
      : undefined;
  if (item.kind === 'channel' && !channel) throw notFound(`no source knows the channel ${item.channelId}`);
  const query = item.kind === 'query' ? normaliseSavedQuery(item.query) : undefined;

  const outcome = await sql.begin(async (tx) => {
    const watchlist = await ownOrNotFound(tx, ownerId, watchlistId, true);
    // A channel only a source knew is stored now: its item shows its name before its crawl begins.
    if (channel) await upsertChannel(tx, channel, deps.log);
    if (item.kind === 'video') {
      const [stored] = await tx`select 1 from videos where video_id = ${item.videoId}`;
      if (!stored) throw notFound(`video ${item.videoId} is not stored here: search its channel first (POST /api/search), then watch it`);
    }
    const [savedQuery] = query
      ? await tx<{ id: string }[]>`
          insert into saved_queries (query) values (${tx.json(query)}) on conflict (query) do update set query = excluded.query returning id::text`
      : [];
    const key = item.kind === 'channel' ? item.channelId : item.kind === 'video' ? item.videoId : savedQuery!.id;
    const [existing] = await itemsWhere(
      tx,
      'i.watchlist_id = $1 and i.kind = $2 and coalesce(i.channel_id, i.video_id, i.saved_query_id::text) = $3',
      [watchlist.id, item.kind, key],
    );
    if (existing) return { item: existing, created: false };
    await holdOneMore(tx, ownerId, 'watchlistItems');
    const [added] = await tx<{ id: string }[]>`
      insert into watchlist_items (watchlist_id, kind, channel_id, video_id, saved_query_id)
      values (${watchlist.id}, ${item.kind}, ${item.kind === 'channel' ? item.channelId : null},
        ${item.kind === 'video' ? item.videoId : null}, ${savedQuery?.id ?? null})
      returning id::text`;
    await tx`update watchlists set updated_at = now() where id = ${watchlist.id}`;
    const [presented] = await itemsWhere(tx, 'i.id = $1', [added!.id]);
    return { item: presented!, created: true };
  });

  if (channel) await crawlIfNeverCrawled(deps, channel);
  return outcome;
}

/** A watched channel never crawled (unknown until now, or known only from a video) is crawled in full, as a search would. */
async function crawlIfNeverCrawled(deps: WatchingDeps, channel: { channelId: string; title?: string | undefined }): Promise<void> {
  const [crawled] = await deps.sql`select 1 from crawls where channel_id = ${channel.channelId} and kind = 'full' limit 1`;
  if (!crawled) await startSearch(deps.sql, { userId: null, channel, query: channel.channelId, kind: 'full' }, deps.log);
}

/** Removes an item from the owner's watchlist (a saved query no watchlist holds any more is forgotten); 404 for anyone else's. */
export async function unwatchItem(sql: Sql, ownerId: string, watchlistId: string, itemId: string): Promise<void> {
  await sql.begin(async (tx) => {
    const watchlist = await ownOrNotFound(tx, ownerId, watchlistId, true);
    // Compared as text: an item id that is no uuid is simply not there.
    const removed = await tx`delete from watchlist_items where watchlist_id = ${watchlist.id} and id::text = lower(${itemId}) returning id`;
    if (removed.length === 0) throw notFound(`no item ${itemId} in watchlist ${watchlistId}`);
    await tx`update watchlists set updated_at = now() where id = ${watchlist.id}`;
  });
}
