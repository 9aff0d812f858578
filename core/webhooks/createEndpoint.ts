import { randomBytes } from 'node:crypto';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { ServerKey } from '../secrets/serverKey.ts';
import { holdOneMore } from '../watchlists/allowances.ts';
import { findOwnWatchlist } from '../watchlists/ownWatchlist.ts';
import { selectEndpoints, type WebhookEndpoint } from './endpoint.ts';

/** A signing secret as Standard Webhooks writes it: `whsec_` and the base64 of 24 random bytes. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * Adds a receiver to the owner's watchlist (the webhooks allowance held in the same transaction) and
 * answers it with its secret, which is kept only sealed with the server key: this is the one time it
 * is shown. Undefined when the watchlist is not the owner's; 400 when the URL is there already.
 */
export async function createEndpoint(
  sql: Sql,
  serverKey: ServerKey,
  input: { ownerId: string; watchlistId: string; url: string },
): Promise<(WebhookEndpoint & { secret: string }) | undefined> {
  const secret = newSecret();
  return sql.begin(async (tx) => {
    if (!(await findOwnWatchlist(tx, input.ownerId, input.watchlistId, { lock: true }))) return undefined;
    await holdOneMore(tx, input.ownerId, 'webhooks');
    const [added] = await tx<{ id: string }[]>`
      insert into webhook_endpoints (watchlist_id, url, secret_sealed)
      values (${input.watchlistId}, ${input.url}, ${serverKey.seal(secret)})
      on conflict (watchlist_id, url) do nothing
      returning id::text`;
    if (!added) throw new AppError('INVALID_INPUT', `url: this watchlist has a webhook to ${input.url} already`);
    const [endpoint] = await selectEndpoints(tx, 'e.id = $1', [added.id]);
    return { ...endpoint!, secret };
  });
}
