import type { VNode } from 'preact';
import { FormToken, type FormContext } from './formToken.tsx';

/** What a Watch button watches: a channel, a video, or a full-text search (its words, where and its filters). */
export type WatchTarget =
  | { kind: 'channel'; channelId: string }
  | { kind: 'video'; videoId: string }
  | { kind: 'query'; query: Record<string, string | boolean | undefined> };

/** The visitor's side of a Watch button. */
export type WatchState =
  | { kind: 'anonymous' }
  | { kind: 'unavailable' }
  | {
      kind: 'person';
      /** Every watchlist of theirs, to choose from (none: "My watchlist" is created on the first watch). */
      watchlists: Array<{ id: string; name: string }>;
      /** The watchlists holding this target already, with the item that holds it there. */
      holding: Array<{ watchlistId: string; name: string; itemId: string }>;
    };

const WORDS: Record<WatchTarget['kind'], string> = { channel: 'Watch this channel', video: 'Watch this video', query: 'Watch this query' };

/** The target as the Watch form's hidden fields (POST /watch reads the same names). */
function TargetFields({ target }: { target: WatchTarget }): VNode {
  const fields: Array<[string, string]> =
    target.kind === 'channel'
      ? [['channelId', target.channelId]]
      : target.kind === 'video'
        ? [['videoId', target.videoId]]
        : Object.entries(target.query).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)] as [string, string]]));
  return (
    <>
      <input type="hidden" name="kind" value={target.kind} />
      {fields.map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
    </>
  );
}

/**
 * The Watch button of a channel, a video or a search: a small POST form (adds to the visitor's one
 * watchlist, or the one chosen in a select when they have several; their first creates "My watchlist"),
 * "Watching" with a button that removes it where it is held, and for an anonymous visitor a link to sign in.
 * `here` is the page to come back to; `notice` what the last watch form did.
 */
export function WatchButton({
  ctx,
  target,
  state,
  here,
  notice,
}: {
  ctx: FormContext;
  target: WatchTarget;
  state: WatchState;
  here: string;
  notice?: string | undefined;
}): VNode | null {
  if (state.kind === 'unavailable') return null;
  if (state.kind === 'anonymous')
    return (
      <p class="watch">
        <a class="button secondary" href={`/login?next=${encodeURIComponent(here)}`}>
          Sign in to watch
        </a>
      </p>
    );
  const held = new Set(state.holding.map((holding) => holding.watchlistId));
  const others = state.watchlists.filter((watchlist) => !held.has(watchlist.id));
  return (
    <div class="watch">
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {state.holding.map((holding) => {
        const action = `/watchlists/${holding.watchlistId}/items/${holding.itemId}/remove`;
        return (
          <form key={holding.itemId} method="post" action={action} class="inline-form watching">
            <FormToken ctx={ctx} action={action} />
            <input type="hidden" name="next" value={here} />
            <span>
              ✓ Watching in <a href={`/watchlists#watchlist-${holding.watchlistId}`}>{holding.name}</a>
            </span>
            <button type="submit" class="secondary">
              Stop watching
            </button>
          </form>
        );
      })}
      {state.holding.length === 0 || others.length > 0 ? (
        <form method="post" action="/watch" class="inline-form">
          <FormToken ctx={ctx} action="/watch" />
          <TargetFields target={target} />
          <input type="hidden" name="next" value={here} />
          {others.length > 1 || (others.length === 1 && state.holding.length > 0) ? (
            <>
              <label for={`watch-in-${target.kind}`}>{state.holding.length ? 'Also watch in' : 'Watchlist'}</label>
              <select id={`watch-in-${target.kind}`} name="watchlistId">
                {others.map((watchlist) => (
                  <option key={watchlist.id} value={watchlist.id}>
                    {watchlist.name}
                  </option>
                ))}
              </select>
            </>
          ) : others.length === 1 ? (
            <input type="hidden" name="watchlistId" value={others[0]!.id} />
          ) : null}
          <button type="submit">{state.holding.length ? 'Watch' : WORDS[target.kind]}</button>
        </form>
      ) : null}
    </div>
  );
}
