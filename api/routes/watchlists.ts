import { z } from 'zod';
import { watchlistItemSchema, watchlistSchema, watchlistSummarySchema } from '../../core/watchlists/watchlists.ts';
import {
  addWatchlistItem,
  createWatchlist,
  deleteWatchlist,
  listWatchlists,
  newWatchlistInput,
  readWatchlist,
  removeWatchlistItem,
  toNewItem,
  updateWatchlist,
  watchlistChangesInput,
  watchlistItemInput,
} from '../actions/watchlists.ts';
import { publicOrigin } from '../http/publicOrigin.ts';
import { defineRoute, perform, privateCache, reply, type RouteContext } from '../http/route.ts';

const TAG = 'Watchlists';
const OWNER_ONLY = "Another caller's watchlist is 404, as if it did not exist.";

const watchlistParams = z.strictObject({ id: z.string().min(1).max(100).describe("the watchlist's id") });
const itemParams = watchlistParams.extend({ itemId: z.string().min(1).max(100).describe("the item's id") });
const deleted = z.object({ id: z.string(), deleted: z.literal(true) });

const origin = (ctx: Pick<RouteContext<unknown, unknown, unknown>, 'deps' | 'req'>) => publicOrigin(ctx.deps.config, ctx.req);

const listRoute = defineRoute({
  method: 'GET',
  path: '/api/watchlists',
  tag: TAG,
  summary: 'Your watchlists, newest first, with how many items each watches',
  description: 'All of them: the tier caps how many a user keeps (the watchlists allowance of GET /api/features).',
  auth: 'key',
  ...listWatchlists.access,
  cache: privateCache,
  response: z.object({ watchlists: z.array(watchlistSummarySchema) }),
  async handler(ctx) {
    return { watchlists: await perform(listWatchlists, ctx, { origin: origin(ctx) }) };
  },
});

const createRoute = defineRoute({
  method: 'POST',
  path: '/api/watchlists',
  tag: TAG,
  summary: 'Create a watchlist',
  description:
    'Body {name}: 1–100 characters once trimmed, no control characters, line separators or bidirectional overrides. 403 FORBIDDEN with details {allowance, max, held} when the tier allows no more watchlists.',
  auth: 'key',
  ...createWatchlist.access,
  body: newWatchlistInput,
  response: watchlistSchema,
  status: 201,
  location: { status: 201, description: "the new watchlist's URL" },
  errors: ['FORBIDDEN'],
  async handler(ctx) {
    const watchlist = await perform(createWatchlist, ctx, { origin: origin(ctx), name: ctx.body.name });
    return reply(watchlist, { status: 201, headers: { Location: `/api/watchlists/${watchlist.id}` } });
  },
});

const readRoute = defineRoute({
  method: 'GET',
  path: '/api/watchlists/:id',
  tag: TAG,
  summary: 'One of your watchlists with everything it watches, newest first, and its private feed URL',
  description: OWNER_ONLY,
  auth: 'key',
  ...readWatchlist.access,
  cache: privateCache,
  params: watchlistParams,
  response: watchlistSchema,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(readWatchlist, ctx, { origin: origin(ctx), id: ctx.params.id });
  },
});

const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/api/watchlists/:id',
  tag: TAG,
  summary: 'Rename a watchlist, or rotate its private feed URL',
  description: `Body {name?, rotateFeed?: true}, at least one. rotateFeed gives the watchlist a new feedUrl; the old one answers 404 at once. ${OWNER_ONLY}`,
  auth: 'key',
  ...updateWatchlist.access,
  params: watchlistParams,
  body: watchlistChangesInput,
  response: watchlistSchema,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(updateWatchlist, ctx, { origin: origin(ctx), id: ctx.params.id, ...ctx.body });
  },
});

const deleteRoute = defineRoute({
  method: 'DELETE',
  path: '/api/watchlists/:id',
  tag: TAG,
  summary: 'Delete a watchlist for good, with its items, webhooks (pending deliveries stop) and changes stream',
  description: OWNER_ONLY,
  auth: 'key',
  ...deleteWatchlist.access,
  params: watchlistParams,
  response: deleted,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(deleteWatchlist, ctx, { id: ctx.params.id });
  },
});

const addItemRoute = defineRoute({
  method: 'POST',
  path: '/api/watchlists/:id/items',
  tag: TAG,
  summary: 'Watch a channel, a stored video or a saved full-text query: 201 with the new item, 200 with the one already there',
  description: `Body {kind: "channel", channelId} (UC + 22 characters; a channel never crawled here is crawled now, as a search would: 404 when no source knows it), {kind: "video", videoId} (a video stored here: 404 otherwise; search its channel first), or {kind: "query", q, in?, status?, hasVideo?, hasSubtitles?, hasSummary?} (what GET /api/fts takes to say what matches, checked by the same rules; page, pageSize and sort are not part of it). 403 FORBIDDEN with details {allowance, max, held} past the tier's watchlistItems allowance (over all your watchlists). ${OWNER_ONLY}`,
  auth: 'key',
  ...addWatchlistItem.access,
  params: watchlistParams,
  body: watchlistItemInput,
  response: watchlistItemSchema,
  status: 201,
  alsoAnswers: { 200: watchlistItemSchema },
  errors: ['NOT_FOUND', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'],
  async handler(ctx) {
    const { item, created } = await perform(addWatchlistItem, ctx, { id: ctx.params.id, item: toNewItem(ctx.body) });
    return reply(item, { status: created ? 201 : 200 });
  },
});

const removeItemRoute = defineRoute({
  method: 'DELETE',
  path: '/api/watchlists/:id/items/:itemId',
  tag: TAG,
  summary: 'Stop watching one item of a watchlist',
  description: `A saved query no watchlist holds any more is forgotten. ${OWNER_ONLY}`,
  auth: 'key',
  ...removeWatchlistItem.access,
  params: itemParams,
  response: deleted,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(removeWatchlistItem, ctx, { id: ctx.params.id, itemId: ctx.params.itemId });
  },
});

export const watchlistRoutes = [listRoute, createRoute, readRoute, updateRoute, deleteRoute, addItemRoute, removeItemRoute];
