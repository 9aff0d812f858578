import { normaliseSavedQuery, type SavedQuery } from '../../core/watchlists/watchlists.ts';
import type { Caller } from '../http/guard.ts';
import type { ApiDeps } from '../http/route.ts';
import { takeNotice } from './notice.ts';
import type { PageContext } from './page.tsx';
import type { WatchState, WatchTarget } from './watchButton.tsx';

/** What the Watch button's forms did, said once on the page they return to. */
export const WATCH_NOTICES = {
  watched: 'Now watching: its changes appear on your watchlists page and in the watchlist’s feed.',
  'watched-new': 'Now watching, in your new watchlist “My watchlist”: its changes appear on your watchlists page and in its feed.',
  removed: 'No longer watched.',
} as const;

/** The saved query a search page's Watch button would save, as it is stored (undefined for words the search refuses). */
function savedQueryOf(query: Record<string, string | boolean | undefined>): SavedQuery | undefined {
  try {
    return normaliseSavedQuery(query as SavedQuery);
  } catch {
    return undefined;
  }
}

/**
 * The visitor's side of a Watch button, in one statement: their watchlists, and those that hold the
 * channel, video or search already (with the item, to remove it). Anonymous: a link to sign in; a tier
 * without watchlists: no button.
 */
async function watchStateOf(deps: Pick<ApiDeps, 'sql'>, visitor: Caller, target: WatchTarget): Promise<WatchState> {
  if (visitor.kind === 'anonymous') return { kind: 'anonymous' };
  if (!visitor.tier.features.watchlists) return { kind: 'unavailable' };
  const query = target.kind === 'query' ? savedQueryOf(target.query) : undefined;
  const key = target.kind === 'channel' ? target.channelId : target.kind === 'video' ? target.videoId : null;
  const rows = await deps.sql<{ id: string; name: string; itemId: string | null }[]>`
    select w.id::text as id, w.name,
      (select i.id::text from watchlist_items i left join saved_queries q on q.id = i.saved_query_id
       where i.watchlist_id = w.id and i.kind = ${target.kind}
         and (coalesce(i.channel_id, i.video_id) = ${key} or q.query = ${query ? deps.sql.json(query) : null}::jsonb)
       limit 1) as "itemId"
    from watchlists w where w.owner_id = ${visitor.userId}
    order by w.created_at desc, w.id desc`;
  return {
    kind: 'person',
    watchlists: rows.map(({ id, name }) => ({ id, name })),
    holding: rows.flatMap((row) => (row.itemId ? [{ watchlistId: row.id, name: row.name, itemId: row.itemId }] : [])),
  };
}

/** Everything a page's WatchButton takes: the visitor's state, this page to come back to, and what the last watch form did. */
export async function watchButtonOf(ctx: PageContext<unknown, unknown, unknown>, target: WatchTarget) {
  return {
    ctx,
    target,
    state: await watchStateOf(ctx.deps, ctx.visitor, target),
    here: ctx.req.url ?? ctx.req.path,
    notice: takeNotice(ctx.req, ctx.res, ctx.deps.config, WATCH_NOTICES),
  };
}
