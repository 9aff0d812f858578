import type { VNode } from 'preact';
import { z } from 'zod';
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
  watchlistItemInput,
  type WatchlistItemInput,
} from '../../actions/watchlists.ts';
import { sendBundle, watchlistEvidence } from '../../actions/evidence.ts';
import { listWatchlistChanges } from '../../actions/watchlistChanges.ts';
import { listWebhooks } from '../../actions/webhooks.ts';
import { changeTitle } from '../../../core/watchlists/atom.ts';
import type { Change } from '../../../core/watchlists/change.ts';
import { parseInput } from '../../http/input.ts';
import { publicOrigin } from '../../http/publicOrigin.ts';
import { perform } from '../../http/route.ts';
import { FeedLink } from '../feedLink.tsx';
import { queryHref } from '../formQuery.ts';
import { FormToken, type FormContext } from '../formToken.tsx';
import { keepNotice, takeNotice } from '../notice.ts';
import { takeWebhookSecret } from '../oneTimeKey.ts';
import { WEBHOOK_NOTICES, Webhooks, webhooksOf, type ShownWebhook } from './webhooks.tsx';
import { definePage, redirect, type PageContext } from '../page.tsx';
import { safeNextPath } from '../safeNextPath.ts';
import { WATCH_NOTICES } from '../watchState.ts';

type Ctx = PageContext<unknown, unknown, unknown>;
/** Where the visitor reaches this site: the actions answer absolute feed URLs. */
const origin = (ctx: Ctx) => ({ origin: publicOrigin(ctx.deps.config, ctx.req) });
type Watchlist = Awaited<ReturnType<typeof readWatchlist.run>>;
type Item = Watchlist['items'][number];

/** What the forms of this page did, said once on the page they return to (api/web/notice.ts). */
const NOTICES = {
  ...WATCH_NOTICES,
  ...WEBHOOK_NOTICES,
  created: 'Watchlist created.',
  renamed: 'Watchlist renamed.',
  deleted: 'Watchlist deleted, with what it watched, its feed and its webhooks.',
  rotated: 'Your watchlist has a new feed URL: the old one no longer works. Give the new one to your feed reader.',
} as const;
type Notice = keyof typeof NOTICES;

/** The name of the watchlist a first Watch button creates. */
const FIRST_WATCHLIST = 'My watchlist';

const watchlistParams = z.strictObject({ watchlistId: z.string().max(64) });
const itemParams = watchlistParams.extend({ itemId: z.string().max(64) });
const nextForm = z.looseObject({ next: z.string().optional() });

/** A signed-in person's page; an anonymous visitor signs in first and comes back. */
const signInFirst = (path: string) => redirect(`/login?next=${encodeURIComponent(path)}`);

const sectionId = (watchlistId: string) => `watchlist-${watchlistId}`;
const back = (ctx: Ctx, notice: Notice, to = '/watchlists') => {
  keepNotice(ctx.res, ctx.deps.config, notice);
  return redirect(to);
};

/** An item as a link to what it watches. */
function ItemLink({ item }: { item: Item }): VNode {
  if (item.kind === 'channel')
    return (
      <>
        <span class="kind">Channel</span> <a href={`/channels/${item.channelId}`}>{item.label}</a>
      </>
    );
  if (item.kind === 'video')
    return (
      <>
        <span class="kind">Video</span> <a href={`/videos/${item.videoId}`}>{item.label}</a>
      </>
    );
  return (
    <>
      <span class="kind">Search</span> <a href={queryHref('/search', item.query ?? {}, {})}>“{item.label}”</a>
      {item.query?.in === 'subtitles' ? ' in subtitles' : ''}
    </>
  );
}

function Items({ ctx, watchlist }: { ctx: FormContext; watchlist: Watchlist }): VNode {
  if (watchlist.items.length === 0)
    return <p class="muted">Nothing watched yet: use the Watch button on a channel's page, a video's page or a search.</p>;
  return (
    <ul class="watched">
      {watchlist.items.map((item) => {
        const action = `/watchlists/${watchlist.id}/items/${item.id}/remove`;
        return (
          <li key={item.id}>
            <span class="what">
              <ItemLink item={item} />
            </span>
            <form method="post" action={action}>
              <FormToken ctx={ctx} action={action} />
              <button type="submit" class="secondary small">
                Remove
              </button>
            </form>
          </li>
        );
      })}
    </ul>
  );
}

function FeedUrl({ ctx, watchlist }: { ctx: FormContext; watchlist: Watchlist }): VNode {
  const id = `feed-${watchlist.id}`;
  const rotate = `/watchlists/${watchlist.id}/feed`;
  return (
    <div class="feed-url">
      <label for={id}>Private feed (Atom, for a feed reader)</label>
      <div class="inline-form">
        <input id={id} type="text" readOnly value={watchlist.feedUrl} />
        {/* Shown by site.js where the clipboard can be written. */}
        <button type="button" class="secondary" data-copy={id} hidden>
          Copy
        </button>
      </div>
      <form method="post" action={rotate} class="inline-form">
        <FormToken ctx={ctx} action={rotate} />
        <button type="submit" class="secondary">
          Get a new feed URL
        </button>
        <span class="muted">The old URL then stops working at once, for anyone who has it.</span>
      </form>
    </div>
  );
}

/** How many of a watchlist's latest changes its section shows (the feed and GET /api/watchlists/:id/changes have them all). */
const RECENT_CHANGES = 10;

function RecentChanges({ changes }: { changes: Change[] }): VNode {
  if (changes.length === 0)
    return <p class="muted">No change yet. Deletions, re-uploads, new uploads and changed titles of what it watches appear here.</p>;
  return (
    <ol class="changes">
      {changes.map((change) => (
        <li key={change.id} data-type={change.type}>
          <time dateTime={change.recordedAt}>{change.recordedAt.slice(0, 16).replace('T', ' ')}</time>{' '}
          <a href={`/videos/${change.videoId}`}>{changeTitle(change)}</a>
        </li>
      ))}
    </ol>
  );
}

type Shown = Watchlist & { changes: Change[]; webhooks: ShownWebhook[] };

function WatchlistSection({
  ctx,
  watchlist,
  newSecret,
}: {
  ctx: FormContext;
  watchlist: Shown;
  newSecret: { webhookId: string; secret: string } | undefined;
}): VNode {
  const headingId = `${sectionId(watchlist.id)}-name`;
  const rename = `/watchlists/${watchlist.id}/rename`;
  return (
    <section class="watchlist" id={sectionId(watchlist.id)} aria-labelledby={headingId}>
      <h2 id={headingId}>{watchlist.name}</h2>
      <Items ctx={ctx} watchlist={watchlist} />
      <h3>Recent changes</h3>
      <RecentChanges changes={watchlist.changes} />
      <p>
        <a href={`/watchlists/${watchlist.id}/evidence.zip`} download>
          Download evidence
        </a>{' '}
        <span class="muted">
          (its videos' histories and kept source answers, hashed so anyone can <a href="/evidence/verify">check them</a>; one subtitle
          download per video)
        </span>
      </p>
      <FeedUrl ctx={ctx} watchlist={watchlist} />
      <h3>Webhooks</h3>
      <Webhooks ctx={ctx} watchlistId={watchlist.id} webhooks={watchlist.webhooks} newSecret={newSecret} />
      <details class="manage">
        <summary>Rename or delete</summary>
        <form method="post" action={rename} class="inline-form">
          <FormToken ctx={ctx} action={rename} />
          <label for={`${sectionId(watchlist.id)}-rename`}>New name</label>
          <input id={`${sectionId(watchlist.id)}-rename`} name="name" type="text" value={watchlist.name} required maxLength={100} />
          <button type="submit" class="secondary">
            Rename
          </button>
        </form>
        <p>
          <a href={`/watchlists/${watchlist.id}/delete`}>Delete this watchlist…</a>
        </p>
      </details>
    </section>
  );
}

/** `/watchlists`: the signed-in person's watchlists, each with what it watches, its private feed and how to change it. */
export const watchlistsPage = definePage({
  method: 'GET',
  path: '/watchlists',
  async handler(ctx) {
    if (ctx.visitor.kind === 'anonymous') return signInFirst('/watchlists');
    // The action refuses a tier without watchlists (403, an error page naming the tiers that have them).
    const list = await perform(listWatchlists, ctx, origin(ctx));
    const watchlists: Shown[] = await Promise.all(
      list.map(async ({ id }) => ({
        ...(await perform(readWatchlist, ctx, { ...origin(ctx), id })),
        changes: (await perform(listWatchlistChanges, ctx, { watchlistId: id, limit: RECENT_CHANGES })).items,
        webhooks: await webhooksOf(ctx, await perform(listWebhooks, ctx, id)),
      })),
    );
    const notice = takeNotice(ctx.req, ctx.res, ctx.deps.config, NOTICES);
    const newSecret = takeWebhookSecret(ctx.req, ctx.res, ctx.deps.config);
    return {
      title: 'Your watchlists',
      // A page showing a webhook's secret is never stored, not even by the browser's history cache.
      ...(newSecret ? { headers: { 'Cache-Control': 'no-store' } } : {}),
      styles: ['watchlists.css'],
      head: watchlists.map((watchlist) => (
        <FeedLink key={watchlist.id} href={watchlist.feedUrl} title={`${watchlist.name} (Afterimage)`} />
      )),
      body: (
        <section class="watchlists">
          <h1>Your watchlists</h1>
          {notice ? (
            <p class="notice" role="status">
              {notice}
            </p>
          ) : null}
          <p class="muted">
            Channels, videos and searches you watch: their deletions, re-uploads, restorations, new uploads, changed titles and new matches
            reach you by a private feed.
          </p>
          {watchlists.map((watchlist) => (
            <WatchlistSection key={watchlist.id} ctx={ctx} watchlist={watchlist} newSecret={newSecret} />
          ))}
          {watchlists.length === 0 ? <p>You have no watchlist yet.</p> : null}
          <form method="post" action="/watchlists" class="inline-form create">
            <FormToken ctx={ctx} action="/watchlists" />
            <label for="new-watchlist">Name of a new watchlist</label>
            <input id="new-watchlist" name="name" type="text" required maxLength={100} />
            <button type="submit">Create</button>
          </form>
        </section>
      ),
    };
  },
});

export const createWatchlistPost = definePage({
  method: 'POST',
  path: '/watchlists',
  form: newWatchlistInput,
  access: createWatchlist.access,
  async handler(ctx) {
    const created = await perform(createWatchlist, ctx, { ...origin(ctx), name: ctx.form.name });
    return back(ctx, 'created', `/watchlists#${sectionId(created.id)}`);
  },
});

export const renameWatchlistPost = definePage({
  method: 'POST',
  path: '/watchlists/:watchlistId/rename',
  params: watchlistParams,
  form: newWatchlistInput,
  access: updateWatchlist.access,
  async handler(ctx) {
    await perform(updateWatchlist, ctx, { ...origin(ctx), id: ctx.params.watchlistId, name: ctx.form.name });
    return back(ctx, 'renamed', `/watchlists#${sectionId(ctx.params.watchlistId)}`);
  },
});

export const rotateFeedPost = definePage({
  method: 'POST',
  path: '/watchlists/:watchlistId/feed',
  params: watchlistParams,
  access: updateWatchlist.access,
  async handler(ctx) {
    await perform(updateWatchlist, ctx, { ...origin(ctx), id: ctx.params.watchlistId, rotateFeed: true });
    return back(ctx, 'rotated', `/watchlists#${sectionId(ctx.params.watchlistId)}`);
  },
});

/** `/watchlists/:id/evidence.zip`: GET /api/watchlists/:id/evidence as a download, charged as it is. */
export const watchlistEvidencePage = definePage({
  method: 'GET',
  path: '/watchlists/:watchlistId/evidence.zip',
  params: watchlistParams,
  access: watchlistEvidence.access,
  async handler(ctx) {
    return sendBundle(ctx, ctx.exchange, await perform(watchlistEvidence, ctx, ctx.params.watchlistId));
  },
});

/** `/watchlists/:id/delete`: what deleting the watchlist takes with it, and the button that does it. */
export const deleteWatchlistPage = definePage({
  method: 'GET',
  path: '/watchlists/:watchlistId/delete',
  params: watchlistParams,
  async handler(ctx) {
    if (ctx.visitor.kind === 'anonymous') return signInFirst(`/watchlists/${ctx.params.watchlistId}/delete`);
    const watchlist = await perform(readWatchlist, ctx, { ...origin(ctx), id: ctx.params.watchlistId });
    const action = `/watchlists/${watchlist.id}/delete`;
    return {
      title: `Delete ${watchlist.name}`,
      body: (
        <section class="narrow">
          <h1>Delete “{watchlist.name}”?</h1>
          <p>
            Its {watchlist.items.length} watched item{watchlist.items.length === 1 ? '' : 's'}, its private feed and its webhooks go with
            it; changes already sent stay where they were sent. This cannot be undone.
          </p>
          <form method="post" action={action} class="inline-form">
            <FormToken ctx={ctx} action={action} />
            <button type="submit">Delete the watchlist</button>
            <a href={`/watchlists#${sectionId(watchlist.id)}`}>Keep it</a>
          </form>
        </section>
      ),
    };
  },
});

export const deleteWatchlistPost = definePage({
  method: 'POST',
  path: '/watchlists/:watchlistId/delete',
  params: watchlistParams,
  access: deleteWatchlist.access,
  async handler(ctx) {
    await perform(deleteWatchlist, ctx, { id: ctx.params.watchlistId });
    return back(ctx, 'deleted');
  },
});

/** Removes an item, from this page or from a Watch button ("Stop watching"), and goes back there. */
export const removeItemPost = definePage({
  method: 'POST',
  path: '/watchlists/:watchlistId/items/:itemId/remove',
  params: itemParams,
  form: nextForm,
  access: removeWatchlistItem.access,
  async handler(ctx) {
    await perform(removeWatchlistItem, ctx, { id: ctx.params.watchlistId, itemId: ctx.params.itemId });
    return back(ctx, 'removed', safeNextPath(ctx.form.next, `/watchlists#${sectionId(ctx.params.watchlistId)}`));
  },
});

/** The Watch button's fields: what to watch (a channel, a video or a search's fields), where, and the page to go back to. */
const watchForm = z.looseObject({
  kind: z.enum(['channel', 'video', 'query'], { message: 'expected channel, video or query' }),
  watchlistId: z.string().max(64).optional(),
  next: z.string().optional(),
});

/** A search's yes/no filter as a form sends it; anything else is left for the item's schema to refuse. */
const flag = (value: string | undefined) => (value === 'true' ? true : value === 'false' ? false : value);

/** The item a Watch form names, in the shape of the API's body (watchlistItemInput checks it). */
function itemOf(form: z.output<typeof watchForm>): Record<string, unknown> {
  const { watchlistId: _list, next: _next, hasVideo, hasSubtitles, hasSummary, ...fields } = form as Record<string, string | undefined>;
  if (form.kind !== 'query') return fields;
  return { ...fields, hasVideo: flag(hasVideo), hasSubtitles: flag(hasSubtitles), hasSummary: flag(hasSummary) };
}

/**
 * The Watch button: adds the channel, video or search to the chosen watchlist (the visitor's only one;
 * with none, "My watchlist" is created first), then back to the page it was pressed on.
 */
export const watchPost = definePage({
  method: 'POST',
  path: '/watch',
  form: watchForm,
  access: addWatchlistItem.access,
  async handler(ctx) {
    const { form } = ctx;
    // Checked before anything is created: a refused item makes no "My watchlist".
    const item = toNewItem(parseInput(watchlistItemInput, itemOf(form), 'form') as WatchlistItemInput);
    const here = safeNextPath(form.next, '/watchlists');
    let watchlistId = form.watchlistId;
    let notice: Notice = 'watched';
    if (!watchlistId) {
      const [first] = await perform(listWatchlists, ctx, origin(ctx));
      watchlistId = first?.id ?? (await perform(createWatchlist, ctx, { ...origin(ctx), name: FIRST_WATCHLIST })).id;
      if (!first) notice = 'watched-new';
    }
    await perform(addWatchlistItem, ctx, { id: watchlistId, item });
    return back(ctx, notice, here);
  },
});
