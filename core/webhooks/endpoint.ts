import { z } from 'zod';
import type { Queryable } from '../db/database.ts';

/** A webhook endpoint as its owner sees it: never its secret, which is shown once, at creation. */
export const webhookEndpoint = z.object({
  id: z.string(),
  watchlistId: z.string(),
  url: z.string(),
  status: z.enum(['active', 'disabled']),
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable().describe('why deliveries stopped: 410 Gone, or three days of failures'),
  failingSince: z.string().nullable().describe('when the current run of failed attempts began; null after a success'),
  createdAt: z.string(),
  lastDelivery: z
    .object({
      id: z.string(),
      eventType: z.string(),
      state: z.enum(['pending', 'delivered', 'failed', 'cancelled']),
      createdAt: z.string(),
      lastAttemptAt: z.string().nullable(),
      lastStatus: z.number().int().nullable(),
      lastError: z.string().nullable(),
    })
    .nullable(),
});
export type WebhookEndpoint = z.infer<typeof webhookEndpoint>;

const iso = (column: string) => `to_json(${column})#>>'{}'`;

/** The endpoints (aliased `e`) matching `where`, each with its latest delivery and that delivery's latest attempt. */
export function selectEndpoints(sql: Queryable, where: string, parameters: unknown[]): Promise<WebhookEndpoint[]> {
  return sql.unsafe<WebhookEndpoint[]>(
    `select e.id::text as id, e.watchlist_id::text as "watchlistId", e.url,
       case when e.disabled_at is null then 'active' else 'disabled' end as status,
       ${iso('e.disabled_at')} as "disabledAt", e.disabled_reason as "disabledReason",
       ${iso('e.failing_since')} as "failingSince", ${iso('e.created_at')} as "createdAt",
       (select json_build_object('id', d.id::text, 'eventType', d.event_type, 'state', d.state, 'createdAt', d.created_at,
                 'lastAttemptAt', a.attempted_at, 'lastStatus', a.http_status, 'lastError', a.error)
        from webhook_deliveries d
        left join lateral (select * from webhook_attempts a where a.delivery_id = d.id order by a.id desc limit 1) a on true
        where d.endpoint_id = e.id order by d.id desc limit 1) as "lastDelivery"
     from webhook_endpoints e where ${where} order by e.created_at, e.id`,
    parameters as never[],
  );
}
