import type { Sql } from '../db/database.ts';
import { selectEndpoints, type WebhookEndpoint } from './endpoint.ts';
import { findOwnEndpoint } from './ownEndpoint.ts';

/**
 * Delivers to a disabled endpoint again, from the next change on: what was cancelled while it was
 * disabled stays cancelled (the watchlist's changes list them). Undefined when there is no such endpoint.
 */
export function enableEndpoint(sql: Sql, watchlistId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
  return sql.begin(async (tx) => {
    const endpoint = await findOwnEndpoint(tx, watchlistId, endpointId, { lock: true });
    if (!endpoint) return undefined;
    await tx`update webhook_endpoints set disabled_at = null, disabled_reason = null, failing_since = null where id = ${endpoint.id}`;
    const [enabled] = await selectEndpoints(tx, 'e.id = $1', [endpoint.id]);
    return enabled;
  });
}
