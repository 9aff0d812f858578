/**
 * Atom feeds of the change log (core/watchlists/atom.ts): confirmed deletions, site-wide and per
 * channel, public like the pages; and a watchlist's, at the private URL its owner alone knows.
 */
import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { channelIdSchema } from '../../core/schemas.ts';
import { ATOM_PAGE_SIZE, ATOM_TYPE, atomId, renderAtomFeed, type FeedHead } from '../../core/watchlists/atom.ts';
import { changesById } from '../../core/watchlists/change.ts';
import { deletionPageKey, savedQueryTexts, watchlistPageKey, type FeedPageKey } from '../../core/watchlists/changePages.ts';
import { watchlistByFeedToken } from '../../core/watchlists/feedWatchlist.ts';
import { entityTag, prepareAnswer } from '../http/representation.ts';
import { publicOrigin } from '../http/publicOrigin.ts';
import { defineRoute, handled, privateCache, PUBLIC_PAGE_CACHE, type ApiDeps, type CachePolicy, type Exchange } from '../http/route.ts';

const TAG = 'Feeds';

/** `before`: RFC 5005 paging, the change id the page ends before (what the `next` link carries). */
const feedQuery = z.strictObject({
  before: z
    .string()
    .regex(/^\d{1,18}$/, { message: 'expected a change id, as the next link gives it' })
    .optional()
    .describe('the next (older) page: the entries before this change id'),
});

/** What every feed shares: counted per address as a page request, a 304 counts nothing. */
const feedAccess = {
  auth: 'public',
  query: feedQuery,
  requestLimit: 'pageRequestsPerMinute',
  media: { 'application/atom+xml': z.string() },
} as const;

const PAGING = `${ATOM_PAGE_SIZE} entries a page, newest first; an older page is linked as rel="next" (RFC 5005), ?before=<change id>. Each entry's id is a tag: URI of its change's id, the same on every page and request; its link goes to the video's page.`;

interface FeedAnswer {
  head: Omit<FeedHead, 'self' | 'next'>;
  /** The feed's path, for self and next links. */
  path: string;
  page: FeedPageKey;
  cache: CachePolicy;
}

/**
 * Sends a page of a feed. A page is its head and its changes' ids (the log is append-only), so those
 * tag it: a request that has it gets 304 before anything is rendered.
 */
async function sendFeed(
  ctx: Exchange & { deps: ApiDeps; query: { before?: string | undefined } },
  answer: FeedAnswer,
): Promise<typeof handled> {
  const origin = publicOrigin(ctx.deps.config, ctx.req);
  const { before } = ctx.query;
  const head: FeedHead = {
    ...answer.head,
    self: `${origin}${answer.path}${before ? `?before=${before}` : ''}`,
    ...(answer.page.nextBefore ? { next: `${origin}${answer.path}?before=${answer.page.nextBefore}` } : {}),
  };
  const { ids, newestAt } = answer.page;
  const tag = entityTag(JSON.stringify([ctx.deps.version, origin, head, ids]));
  const prepared = prepareAnswer(ctx, {
    contentType: ATOM_TYPE,
    cache: answer.cache,
    etag: tag,
    modifiedAt: new Date(Math.max(newestAt?.getTime() ?? 0, head.since.getTime())),
  });
  if (!prepared) return handled;
  let body = rendered.get(tag);
  if (body === undefined) {
    const changes = await changesById(ctx.deps.sql, ids);
    const queries = await savedQueryTexts(ctx.deps.sql, [...new Set(changes.flatMap((change) => change.savedQueryId ?? []))]);
    body = renderAtomFeed(head, origin, changes, queries);
    // The oldest page made goes first: a full cache holds the pages readers asked for last.
    if (rendered.size >= RENDERED_PAGES) rendered.delete(rendered.keys().next().value!);
    rendered.set(tag, body);
  }
  await prepared.send(body);
  return handled;
}

/**
 * Pages made, by their tag: a tag names the page's bytes (its head and its append-only changes), so a
 * page many readers fetch whole (the first page of a popular feed) is read and written once.
 */
const rendered = new Map<string, string>();
const RENDERED_PAGES = 256;

/** The feeds of deletions began with the change log; an empty one says so. */
const LOG_BEGAN = new Date('2026-01-01T00:00:00Z');

const deletionsFeedRoute = defineRoute({
  method: 'GET',
  path: '/feeds/deletions.atom',
  tag: TAG,
  summary: 'Atom feed of confirmed deletions, site-wide',
  description: `Every confirmed deletion (video.deleted) and every deleted video found re-uploaded (video.reuploaded), with the reason, claimant, previous status and evidence. ${PAGING} Public; cached 5 minutes, then revalidated by ETag or Last-Modified (a 304 counts nothing).`,
  ...feedAccess,
  cache: PUBLIC_PAGE_CACHE,
  async handler(ctx) {
    const origin = publicOrigin(ctx.deps.config, ctx.req);
    return sendFeed(ctx, {
      head: { id: atomId(origin, 'deletions'), title: 'Afterimage: confirmed deletions', alternate: `${origin}/`, since: LOG_BEGAN },
      path: '/feeds/deletions.atom',
      page: await deletionPageKey(ctx.deps.sql, { before: ctx.query.before, limit: ATOM_PAGE_SIZE }),
      cache: PUBLIC_PAGE_CACHE,
    });
  },
});

const channelDeletionsFeedRoute = defineRoute({
  method: 'GET',
  path: '/channels/:channelId/deletions.atom',
  tag: TAG,
  summary: "Atom feed of a channel's confirmed deletions",
  description: `The site-wide deletions feed for one stored channel (404 for one never stored). ${PAGING} Public; cached like the site-wide feed.`,
  ...feedAccess,
  params: z.strictObject({ channelId: channelIdSchema }),
  cache: PUBLIC_PAGE_CACHE,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { channelId } = ctx.params;
    const [channel] = await ctx.deps.sql<{ title: string; firstSeenAt: Date }[]>`
      select title, first_seen_at as "firstSeenAt" from channels where channel_id = ${channelId}`;
    if (!channel) throw notFound(`no stored channel ${channelId}`);
    const origin = publicOrigin(ctx.deps.config, ctx.req);
    const path = `/channels/${channelId}/deletions.atom`;
    return sendFeed(ctx, {
      head: {
        id: atomId(origin, `channel:${channelId}:deletions`),
        title: `Afterimage: confirmed deletions of ${channel.title || channelId}`,
        alternate: `${origin}/channels/${channelId}`,
        since: channel.firstSeenAt,
      },
      path,
      page: await deletionPageKey(ctx.deps.sql, { channelId, before: ctx.query.before, limit: ATOM_PAGE_SIZE }),
      cache: PUBLIC_PAGE_CACHE,
    });
  },
});

const watchlistFeedRoute = defineRoute({
  method: 'GET',
  path: '/feeds/watchlists/:id/:token.atom',
  tag: TAG,
  summary: "Atom feed of a watchlist's changes, at its private URL",
  description: `Every change the watchlist watches (as GET /api/watchlists/{id}/changes lists them), for a feed reader: no key, the URL is the secret (feedUrl of the watchlist). After its owner rotates it, the old URL answers 404 at once, as any wrong one does. ${PAGING} Cached privately, revalidated by ETag or Last-Modified.`,
  ...feedAccess,
  params: z.strictObject({ id: z.string().max(64), token: z.string().max(64) }),
  cache: privateCache,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const watchlist = await watchlistByFeedToken(ctx.deps.sql, ctx.deps.serverKey, ctx.params.id, ctx.params.token);
    if (!watchlist) throw notFound('no such feed: the URL is wrong, or its owner has replaced it');
    const origin = publicOrigin(ctx.deps.config, ctx.req);
    return sendFeed(ctx, {
      head: {
        id: atomId(origin, `watchlist:${watchlist.id}`),
        title: `Afterimage watchlist: ${watchlist.name}`,
        since: watchlist.createdAt,
      },
      path: `/feeds/watchlists/${watchlist.id}/${ctx.params.token}.atom`,
      page: await watchlistPageKey(ctx.deps.sql, watchlist.id, ctx.query.before, ATOM_PAGE_SIZE),
      cache: privateCache,
    });
  },
});

export const feedRoutes = [deletionsFeedRoute, channelDeletionsFeedRoute, watchlistFeedRoute];
