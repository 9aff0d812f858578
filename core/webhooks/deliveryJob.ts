import type { Queryable } from '../db/database.ts';
import { enqueue } from '../jobs/enqueue.ts';

/** The one job key of an endpoint's deliveries (sql fan-out uses the same): at most one job waits per endpoint. */
export const deliveryJobKey = (endpointId: string) => `deliver_webhooks:${endpointId}`;

/**
 * Queues the endpoint's job for `runAt` (default now), unless its waiting job runs earlier: a delivery
 * due now never waits behind a later time set meanwhile (a run that saw another run's claim, say).
 */
export async function scheduleDeliveries(tx: Queryable, endpointId: string, runAt = new Date()) {
  const [waiting] = await tx<{ runAt: Date }[]>`
    select run_at as "runAt" from graphile_worker.jobs where key = ${deliveryJobKey(endpointId)} and locked_at is null`;
  return postponeDeliveries(tx, endpointId, waiting && waiting.runAt < runAt ? waiting.runAt : runAt);
}

/** Moves the endpoint's waiting job to `runAt`, later than it would have run: a failing receiver's wait. */
export const postponeDeliveries = (tx: Queryable, endpointId: string, runAt: Date) =>
  enqueue(tx, 'deliver_webhooks', { endpointId }, { jobKey: deliveryJobKey(endpointId), jobKeyMode: 'replace', runAt });
