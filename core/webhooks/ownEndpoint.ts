import { z } from 'zod';
import type { Queryable } from '../db/database.ts';

const uuid = z.uuid();

/**
 * The watchlist's endpoint `endpointId`; undefined for any other (the watchlist's owner is checked by
 * the caller, core/watchlists/ownWatchlist.ts). `lock` holds its row for the transaction.
 */
export async function findOwnEndpoint(sql: Queryable, watchlistId: string, endpointId: string, options: { lock?: boolean } = {}) {
  if (!uuid.safeParse(endpointId).success) return undefined;
  const [row] = await sql.unsafe<{ id: string; disabled: boolean }[]>(
    `select id::text, disabled_at is not null as disabled from webhook_endpoints
     where id = $1 and watchlist_id = $2${options.lock ? ' for update' : ''}`,
    [endpointId, watchlistId],
  );
  return row;
}
