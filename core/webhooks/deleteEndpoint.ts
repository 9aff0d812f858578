import type { Sql } from '../db/database.ts';
import { deliveryJobKey } from './deliveryJob.ts';
import { findOwnEndpoint } from './ownEndpoint.ts';

/** Deletes the watchlist's endpoint with its deliveries and their log (cascade) and its waiting job; false when there is none. */
export function deleteEndpoint(sql: Sql, watchlistId: string, endpointId: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const endpoint = await findOwnEndpoint(tx, watchlistId, endpointId, { lock: true });
    if (!endpoint) return false;
    await tx`delete from webhook_endpoints where id = ${endpoint.id}`;
    // A job already running finds no endpoint and ends.
    await tx`select graphile_worker.remove_job(${deliveryJobKey(endpoint.id)})`;
    return true;
  });
}
