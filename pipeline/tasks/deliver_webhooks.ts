import type { Sql } from '../../core/db/database.ts';
import type { ServerKey } from '../../core/secrets/serverKey.ts';
import { deliverWebhooks } from '../../core/webhooks/deliverWebhooks.ts';
import { webhookReceivers } from '../../core/webhooks/postWebhook.ts';
import { defineTask } from '../defineTask.ts';

export interface DeliverWebhooksDeps {
  sql: Sql;
  serverKey: ServerKey;
  /** WEBHOOK_ALLOW_PRIVATE: receivers on private and loopback addresses are reached too. */
  allowPrivate: boolean;
}

/**
 * Delivers the due webhooks of one shard of endpoints (core/webhooks/deliverWebhooks.ts). Its job is
 * queued under the shard's key by the fan-out, a test event and itself (the next retry); a failed
 * delivery is not a failed job: the delivery's own schedule decides when it is tried again.
 */
export function deliverWebhooksTask(deps: DeliverWebhooksDeps) {
  // One pool of kept-alive connections per worker process, shared by every run.
  const receivers = webhookReceivers(deps.allowPrivate);
  return defineTask('deliver_webhooks', ({ shard }) => deliverWebhooks({ sql: deps.sql, serverKey: deps.serverKey, receivers }, shard));
}
