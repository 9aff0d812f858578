import type { Sql } from '../db/database.ts';
import { findOwnEndpoint } from './ownEndpoint.ts';

/** Deletes the watchlist's endpoint with its deliveries and their log (cascade); false when there is none. */
export function deleteEndpoint(sql: Sql, watchlistId: string, endpointId: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const endpoint = await findOwnEndpoint(tx, watchlistId, endpointId, { lock: true });
    if (!endpoint) return false;
    // Its shard's job, running or waiting, finds neither it nor its deliveries any more.
    await tx`delete from webhook_endpoints where id = ${endpoint.id}`;
    return true;
  });
}
