import type { Queryable } from '../db/database.ts';
import type { ServerKey } from '../secrets/serverKey.ts';

/** A watchlist's row as its owner's actions need it. */
export interface WatchlistRow {
  id: string;
  ownerId: string;
  name: string;
  feedVersion: number;
  createdAt: string;
  updatedAt: string;
}

export const WATCHLIST_COLUMNS = `w.id::text as id, w.owner_id::text as "ownerId", w.name, w.feed_version as "feedVersion",
  to_json(w.created_at)#>>'{}' as "createdAt", to_json(w.updated_at)#>>'{}' as "updatedAt"`;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The owner's watchlist with this id; undefined for anyone else's, as for one that does not exist
 * (another caller gets 404, never 403: an id reveals nothing). `lock` holds its row for the
 * transaction (adding items, webhooks).
 */
export async function findOwnWatchlist(
  sql: Queryable,
  ownerId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<WatchlistRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [row] = await sql.unsafe<WatchlistRow[]>(
    `select ${WATCHLIST_COLUMNS} from watchlists w where w.id = $1 and w.owner_id = $2${options.lock ? ' for update' : ''}`,
    [id, ownerId],
  );
  return row;
}

/** The token of a watchlist's private feed: derived, never stored, changed when the owner rotates it (a new version). */
export const feedToken = (key: ServerKey, watchlistId: string, feedVersion: number) =>
  key.derive(`feed:${watchlistId}:${feedVersion}`).slice(0, 32);

/** The path of a watchlist's private Atom feed; its owner alone knows it. */
export const watchlistFeedPath = (key: ServerKey, row: Pick<WatchlistRow, 'id' | 'feedVersion'>) =>
  `/feeds/watchlists/${row.id}/${feedToken(key, row.id, row.feedVersion)}.atom`;
