import { randomBytes } from 'node:crypto';
import type { Sql } from '../db/database.ts';
import { invalidInput } from '../errors.ts';
import { scheduleEndpoint } from './deliveryJob.ts';
import { findOwnEndpoint } from './ownEndpoint.ts';

/** The event type of a test delivery: it carries no change. */
const TEST_EVENT_TYPE = 'webhook.test';

/**
 * Queues a test delivery to the endpoint, sent at once (ahead of a retry's wait: only what is due is
 * sent with it) and logged like any other. Undefined when there is no such endpoint; 400 when it is disabled.
 */
export function sendTestEvent(sql: Sql, watchlistId: string, endpointId: string) {
  return sql.begin(async (tx) => {
    const endpoint = await findOwnEndpoint(tx, watchlistId, endpointId, { lock: true });
    if (!endpoint) return undefined;
    if (endpoint.disabled) throw invalidInput('this webhook is disabled: enable it first (POST …/enable)');
    const [delivery] = await tx<{ id: string; messageId: string; createdAt: string }[]>`
      insert into webhook_deliveries (endpoint_id, change_id, message_id, event_type)
      values (${endpoint.id}, null, ${`msg_${randomBytes(18).toString('base64url')}`}, ${TEST_EVENT_TYPE})
      returning id::text, message_id as "messageId", to_json(created_at)#>>'{}' as "createdAt"`;
    await scheduleEndpoint(tx, endpoint.id);
    return delivery!;
  });
}
