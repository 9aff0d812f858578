/**
 * A watchlist's changes as its owner reads them: a page at a time (GET /api/watchlists/:id/changes,
 * the watchlist_changes tool) or live (GET /api/watchlists/:id/stream). Both read the watchlist's event
 * stream, what the fan-out delivered to it (core/watchlists/fanOut.ts).
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError, notFound } from '../../core/errors.ts';
import { streamHead } from '../../core/events/events.ts';
import { changeSchema } from '../../core/watchlists/change.ts';
import { watchlistChangePage } from '../../core/watchlists/changePages.ts';
import { findOwnWatchlist, type WatchlistRow } from '../../core/watchlists/ownWatchlist.ts';
import { watchlistStream } from '../../core/watchlists/watchlistEvents.ts';
import type { Caller } from '../http/guard.ts';
import { defineAction, handled, type ActionContext } from '../http/route.ts';
import { resumePosition } from '../sse/followStream.ts';
import { eventFrame, openEventStream } from '../sse/writer.ts';

/** Reading a watchlist: an L1 key (or a signed-in person) of a tier with the watchlists feature. */
const reading = { scope: 'L1', feature: 'watchlists' } as const;

const watchlistOwner = (caller: Caller): string => {
  if (caller.kind === 'anonymous')
    throw new AppError('API_KEY_REQUIRED', 'watchlists need an API key, or a signed-in account on the website');
  return caller.userId;
};

/** The caller's watchlist; anybody else's is as unknown as a missing one (404). */
async function ownWatchlist({ deps, caller }: ActionContext, id: string): Promise<WatchlistRow> {
  const row = await findOwnWatchlist(deps.sql, watchlistOwner(caller), id);
  if (!row) throw notFound(`no watchlist ${id}`);
  return row;
}

/** The list's cursor: opaque to clients (base64url of the change id the next page starts before). */
const encodeCursor = (before: string) => Buffer.from(`before:${before}`).toString('base64url');
export const changesCursor = z
  .string()
  .max(64)
  .transform((value, ctx) => {
    const before = /^before:(\d{1,18})$/.exec(Buffer.from(value, 'base64url').toString())?.[1];
    if (before === undefined) ctx.addIssue({ code: 'custom', message: 'expected the nextCursor of an earlier page of this list' });
    return before ?? z.NEVER;
  })
  .describe('nextCursor of the previous page; leave it out for the newest changes');

export const CHANGES_PER_PAGE = { default: 50, max: 100 } as const;

export const changeList = z.object({
  items: z.array(changeSchema).describe('newest first'),
  nextCursor: z.string().nullable().describe('pass as cursor for the next (older) page; null on the last page'),
});

/** A page of the watchlist's changes, newest first. */
export const listWatchlistChanges = defineAction({
  what: "reading a watchlist's changes",
  access: reading,
  async run(ctx, input: { watchlistId: string; cursor?: string | undefined; limit: number }): Promise<z.output<typeof changeList>> {
    const watchlist = await ownWatchlist(ctx, input.watchlistId);
    const page = await watchlistChangePage(ctx.deps.sql, watchlist.id, input.cursor, input.limit);
    return { items: page.changes, nextCursor: page.nextBefore === null ? null : encodeCursor(page.nextBefore) };
  },
});

/**
 * The watchlist's changes live, as they are fanned out to it. A client that names the last event it
 * received gets every later one, none twice; a first connection gets those from now on (its history
 * is the list's).
 */
export const followWatchlistChanges = defineAction({
  what: "following a watchlist's changes",
  access: reading,
  async run(ctx, input: { watchlistId: string; res: ServerResponse; lastEventId: string | undefined }): Promise<typeof handled> {
    const { deps } = ctx;
    const watchlist = await ownWatchlist(ctx, input.watchlistId);
    const stream = watchlistStream(watchlist.id);
    const from = input.lastEventId ? await resumePosition(deps.sql, stream, input.lastEventId) : await streamHead(deps.sql, stream);
    let unsubscribe = () => {};
    const sse = openEventStream(input.res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => unsubscribe());
    unsubscribe = deps.hub.subscribe(
      stream,
      from,
      (events) => sse.write(events.map((event) => eventFrame(event.type, event.payload, event.id)).join('')),
      sse.drained,
    );
    if (!sse.open) unsubscribe();
    return handled;
  },
});
