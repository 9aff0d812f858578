import type { Queryable } from '../db/database.ts';
import { enqueue } from '../jobs/enqueue.ts';

/** The one job key of an endpoint's deliveries (sql fan-out uses the same): at most one job waits per endpoint. */
export const deliveryJobKey = (endpointId: string) => `deliver_webhooks:${endpointId}`;

/**
 * Moves the endpoint's waiting job to `runAt` (or queues one): its pending deliveries are tried then,
 * not earlier, whatever the fan-out queues meanwhile (it keeps the waiting job's time).
 */
export const scheduleDeliveries = (tx: Queryable, endpointId: string, runAt?: Date) =>
  enqueue(
    tx,
    'deliver_webhooks',
    { endpointId },
    { jobKey: deliveryJobKey(endpointId), jobKeyMode: 'replace', ...(runAt ? { runAt } : {}) },
  );
