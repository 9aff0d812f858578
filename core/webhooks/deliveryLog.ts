import { z } from 'zod';
import type { Queryable } from '../db/database.ts';

const webhookAttempt = z.object({
  attempt: z.number().int(),
  attemptedAt: z.string(),
  status: z.number().int().nullable().describe("the receiver's HTTP status; null when no answer came"),
  durationMs: z.number().int(),
  error: z.string().nullable().describe('why it failed: the status and the start of the answer, a timeout, a refused address…'),
});

export const webhookDelivery = z.object({
  id: z.string(),
  messageId: z.string().describe('the webhook-id header, the same on every attempt'),
  eventType: z.string(),
  changeId: z.string().nullable().describe('null for a test event'),
  state: z.enum(['pending', 'delivered', 'failed', 'cancelled']),
  createdAt: z.string(),
  nextAttemptAt: z.string().nullable().describe('pending deliveries only'),
  finishedAt: z.string().nullable(),
  attempts: z.array(webhookAttempt).describe('oldest first'),
});
export type WebhookDelivery = z.infer<typeof webhookDelivery>;

/** Deliveries a page of the log holds at most. */
export const DELIVERY_LOG_PAGE = 100;

/**
 * The endpoint's deliveries, newest first, each with every attempt; `before` (a delivery id, the
 * previous page's cursor) pages on. `next` is the cursor of the following page, null on the last.
 */
export async function deliveryLog(sql: Queryable, endpointId: string, page: { before: string | undefined; limit: number }) {
  const rows = await sql<WebhookDelivery[]>`
    select d.id::text as id, d.message_id as "messageId", d.event_type as "eventType", d.change_id::text as "changeId",
      d.state, to_json(d.created_at)#>>'{}' as "createdAt",
      case when d.state = 'pending' then to_json(d.next_attempt_at)#>>'{}' end as "nextAttemptAt",
      to_json(d.finished_at)#>>'{}' as "finishedAt",
      coalesce((select json_agg(json_build_object('attempt', a.attempt, 'attemptedAt', a.attempted_at, 'status', a.http_status,
                  'durationMs', a.duration_ms, 'error', a.error) order by a.id)
                from webhook_attempts a where a.delivery_id = d.id), '[]') as attempts
    from webhook_deliveries d
    where d.endpoint_id = ${endpointId} and (${page.before ?? null}::bigint is null or d.id < ${page.before ?? null}::bigint)
    order by d.id desc
    limit ${page.limit + 1}`;
  const more = rows.length > page.limit;
  const deliveries = more ? rows.slice(0, page.limit) : rows;
  return { deliveries, next: more ? deliveries.at(-1)!.id : null };
}
