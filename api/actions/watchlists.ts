/**
 * Watchlists as their owners keep them: list, create, read, rename or rotate the feed, delete; add and
 * remove the channels, videos and saved full-text queries they watch. /api/watchlists…, the
 * /watchlists page and the watchlist tools perform these. Owner-only: anybody else's watchlist,
 * administrators' too, is as unknown as a missing one (404).
 */
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { channelIdSchema, videoIdSchema } from '../../core/schemas.ts';
import {
  changeWatchlist,
  insertWatchlist,
  ownWatchlists,
  removeWatchlist,
  unwatchItem,
  watchItem,
  watchlistName,
  watchlistWithItems,
  type NewWatchlistItem,
  type Presenting,
  type Watchlist,
  type WatchlistItem,
  type WatchlistSummary,
} from '../../core/watchlists/watchlists.ts';
import type { Caller } from '../http/guard.ts';
import { defineAction, type ActionContext } from '../http/route.ts';
import { ftsQuery } from './fts.ts';

/** Reading one's watchlists: a tier with the watchlists feature, and an L1+ key when called with one. */
export const watchlistReadAccess = { scope: 'L1', feature: 'watchlists' } as const;
/** Changing them: an L2+ key (L2 starts work: watching a channel may start its crawl). */
export const watchlistWriteAccess = { scope: 'L2', feature: 'watchlists' } as const;

/** The owner of the caller's watchlists: a key's user or a signed-in person; anonymous callers have none (401). */
export const watchlistOwner = (caller: Caller): string => {
  if (caller.kind === 'anonymous')
    throw new AppError('API_KEY_REQUIRED', 'watchlists need an API key, or a signed-in account on the website');
  return caller.userId;
};

/** The body that creates a watchlist: POST /api/watchlists, the page's form, create_watchlist. */
export const newWatchlistInput = z.strictObject({ name: watchlistName });

/** What PATCH /api/watchlists/:id changes: its name, its feed's URL, or both. */
export const watchlistChangesInput = z
  .strictObject({
    name: watchlistName.optional(),
    rotateFeed: z
      .literal(true, { message: 'expected true (omit it to keep the feed URL)' })
      .optional()
      .describe('true: a new feedUrl; the old one answers 404 at once'),
  })
  .refine((changes) => changes.name !== undefined || changes.rotateFeed !== undefined, {
    message: 'give name, rotateFeed, or both',
  });

const filterFlag = z.boolean({ message: 'expected true or false' }).optional();

/**
 * One item to watch. A query is what GET /api/fts takes to say what matches (q, in and the filters;
 * not page, pageSize or sort, which only present results), checked by the same rules.
 */
export const watchlistItemInput = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('channel'), channelId: channelIdSchema }),
    z.strictObject({ kind: z.literal('video'), videoId: videoIdSchema }),
    z.strictObject({
      kind: z.literal('query'),
      q: ftsQuery.shape.q,
      in: ftsQuery.shape.in,
      status: ftsQuery.shape.status,
      hasVideo: filterFlag,
      hasSubtitles: filterFlag,
      hasSummary: filterFlag,
    }),
  ],
  { message: 'kind: expected channel, video or query' },
);
export type WatchlistItemInput = z.output<typeof watchlistItemInput>;

/** The item as the core adds it: a query's fields become its saved query. */
export function toNewItem(input: WatchlistItemInput): NewWatchlistItem {
  if (input.kind !== 'query') return input;
  const { kind: _kind, ...query } = input;
  return { kind: 'query', query };
}

/** Where the caller reaches this service (api/http/publicOrigin.ts): feedUrl is absolute. */
interface Origin {
  origin: string;
}

const presenting = ({ deps }: ActionContext, { origin }: Origin): Presenting => ({ serverKey: deps.serverKey, origin });

/** The caller's watchlists, newest first, with their item counts. */
export const listWatchlists = defineAction({
  what: 'watchlists',
  access: watchlistReadAccess,
  run: (ctx, input: Origin): Promise<WatchlistSummary[]> => ownWatchlists(ctx.deps.sql, presenting(ctx, input), watchlistOwner(ctx.caller)),
});

/** A new, empty watchlist; 403 FORBIDDEN (details: allowance, max, held) when the tier allows no more. */
export const createWatchlist = defineAction({
  what: 'creating a watchlist',
  access: watchlistWriteAccess,
  run: (ctx, input: Origin & { name: string }): Promise<Watchlist> =>
    insertWatchlist(ctx.deps.sql, presenting(ctx, input), watchlistOwner(ctx.caller), input.name),
});

/** One of the caller's watchlists with its items; 404 for anybody else's. */
export const readWatchlist = defineAction({
  what: 'watchlists',
  access: watchlistReadAccess,
  run: (ctx, input: Origin & { id: string }): Promise<Watchlist> =>
    watchlistWithItems(ctx.deps.sql, presenting(ctx, input), watchlistOwner(ctx.caller), input.id),
});

/** Renames the caller's watchlist and/or rotates its feed URL. */
export const updateWatchlist = defineAction({
  what: 'changing a watchlist',
  access: watchlistWriteAccess,
  run: (ctx, input: Origin & { id: string; name?: string | undefined; rotateFeed?: boolean | undefined }): Promise<Watchlist> =>
    changeWatchlist(ctx.deps.sql, presenting(ctx, input), watchlistOwner(ctx.caller), input.id, input),
});

/** Deletes the caller's watchlist, its items, webhooks and events, for good. */
export const deleteWatchlist = defineAction({
  what: 'deleting a watchlist',
  access: watchlistWriteAccess,
  async run(ctx, input: { id: string }): Promise<{ id: string; deleted: true }> {
    await removeWatchlist(ctx.deps.sql, watchlistOwner(ctx.caller), input.id);
    return { id: input.id, deleted: true };
  },
});

/**
 * Watches one more thing in the caller's watchlist; `created` false: it was there already, and that
 * item is answered. 403 FORBIDDEN (details) past the tier's watchlistItems allowance.
 */
export const addWatchlistItem = defineAction({
  what: 'adding to a watchlist',
  access: watchlistWriteAccess,
  run: ({ deps, caller, log }, input: { id: string; item: NewWatchlistItem }): Promise<{ item: WatchlistItem; created: boolean }> =>
    watchItem(
      { sql: deps.sql, sources: deps.sources, log, sourceWaitBudgetMs: deps.config.SOURCE_WAIT_BUDGET_MS },
      watchlistOwner(caller),
      input.id,
      input.item,
    ),
});

/** Stops watching one item of the caller's watchlist. */
export const removeWatchlistItem = defineAction({
  what: 'removing from a watchlist',
  access: watchlistWriteAccess,
  async run(ctx, input: { id: string; itemId: string }): Promise<{ id: string; deleted: true }> {
    await unwatchItem(ctx.deps.sql, watchlistOwner(ctx.caller), input.id, input.itemId);
    return { id: input.itemId, deleted: true };
  },
});
