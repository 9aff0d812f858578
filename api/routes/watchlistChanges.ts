/** A watchlist's changes over REST: a page at a time, and live over SSE (api/actions/watchlistChanges.ts). */
import { z } from 'zod';
import { watchlistEventVocabulary } from '../../core/watchlists/watchlistEvents.ts';
import { changeList, changesCursor, CHANGES_PER_PAGE, followWatchlistChanges, listWatchlistChanges } from '../actions/watchlistChanges.ts';
import { wholeNumber } from '../http/input.ts';
import { defineRoute, handled, perform, privateCache, streamTokenParam } from '../http/route.ts';
import { lastEventId } from '../sse/writer.ts';

const TAG = 'Watchlists';
const params = z.strictObject({ id: z.string().max(64).describe("the watchlist's id") });

const listChangesRoute = defineRoute({
  method: 'GET',
  path: '/api/watchlists/:id/changes',
  tag: TAG,
  summary: "Your watchlist's changes, newest first, a page at a time",
  description: `The changes of what the watchlist watches since each item was added: confirmed status changes (video.deleted, video.reuploaded, video.restored, with the reason, claimant, previous status and evidence), metadata changes (video.metadata_changed: the fields, before and after), new uploads of watched channels (channel.video_added) and new matches of saved queries (query.new_match). Up to limit (default ${CHANGES_PER_PAGE.default}) a page; nextCursor continues to older ones. Another owner's watchlist is 404.`,
  auth: 'key',
  ...listWatchlistChanges.access,
  params,
  query: z.strictObject({
    cursor: changesCursor.optional(),
    limit: wholeNumber('limit', 1, CHANGES_PER_PAGE.max, CHANGES_PER_PAGE.default),
  }),
  response: changeList,
  cache: privateCache,
  errors: ['NOT_FOUND'],
  handler: (ctx) => perform(listWatchlistChanges, ctx, { watchlistId: ctx.params.id, cursor: ctx.query.cursor, limit: ctx.query.limit }),
});

const streamChangesRoute = defineRoute({
  method: 'GET',
  path: '/api/watchlists/:id/stream',
  tag: TAG,
  summary: "Your watchlist's changes live, over Server-Sent Events",
  description:
    "Each change the watchlist watches, as it is logged: the event is named by the change type, its data the change (as in …/changes). A first connection receives changes from then on (the list has the earlier ones); every event has an id, and a reconnect with Last-Event-ID (or ?lastEventId=) receives exactly the changes after it. Comments (: keep-alive) every SSE_HEARTBEAT_SECONDS. Another owner's watchlist is 404.",
  auth: 'key',
  ...followWatchlistChanges.access,
  params,
  query: z.strictObject({ lastEventId: z.string().max(64).optional(), token: streamTokenParam }),
  events: watchlistEventVocabulary,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    await perform(followWatchlistChanges, ctx, {
      watchlistId: ctx.params.id,
      res: ctx.res,
      lastEventId: lastEventId(ctx.req, ctx.query.lastEventId),
    });
    return handled;
  },
});

export const watchlistChangeRoutes = [listChangesRoute, streamChangesRoute];
