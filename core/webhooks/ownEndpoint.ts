import { z } from 'zod';
import type { Queryable } from '../db/database.ts';

const uuid = z.uuid();

/**
 * The id of the endpoint `endpointId` of this watchlist, locked for the transaction; undefined for
 * any other (the watchlist's owner is checked by the caller, core/watchlists/ownWatchlist.ts).
 */
export async function lockOwnEndpoint(tx: Queryable, watchlistId: string, endpointId: string) {
  if (!uuid.safeParse(endpointId).success) return undefined;
  const [row] = await tx<{ id: string; disabled: boolean }[]>`
    select id::text, disabled_at is not null as disabled from webhook_endpoints
    where id = ${endpointId} and watchlist_id = ${watchlistId} for update`;
  return row;
}
