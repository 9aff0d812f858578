import type { Queryable } from '../db/database.ts';
import { enqueue } from '../jobs/enqueue.ts';

/** Endpoints are sent to by one job per shard (sql/048: `hashtext(id) & 15`); the fan-out queues the same keys. */
export const DELIVERY_SHARDS = 16;

const deliveryJobKey = (shard: number) => `deliver_webhooks:${shard}`;

/**
 * Queues the shard's job for `runAt` (default now), unless its waiting job runs earlier: a delivery
 * due now never waits behind a later time set meanwhile (a run that saw another run's claim, say).
 */
export async function scheduleShard(tx: Queryable, shard: number, runAt = new Date()) {
  const [waiting] = await tx<{ runAt: Date }[]>`
    select run_at as "runAt" from graphile_worker.jobs where key = ${deliveryJobKey(shard)} and locked_at is null`;
  await enqueue(
    tx,
    'deliver_webhooks',
    { shard },
    { jobKey: deliveryJobKey(shard), jobKeyMode: 'replace', runAt: waiting && waiting.runAt < runAt ? waiting.runAt : runAt },
  );
}

/** Queues the job of the endpoint's shard to run now. */
export async function scheduleEndpoint(tx: Queryable, endpointId: string) {
  const [endpoint] = await tx<{ shard: number }[]>`select delivery_shard as shard from webhook_endpoints where id = ${endpointId}`;
  if (endpoint) await scheduleShard(tx, endpoint.shard);
}
