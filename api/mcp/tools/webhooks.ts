import { z } from 'zod';
import { DELIVERY_LOG_PAGE, webhookDelivery } from '../../../core/webhooks/deliveryLog.ts';
import { webhookEndpoint, type WebhookEndpoint } from '../../../core/webhooks/endpoint.ts';
import { listWebhooks, testWebhook, webhookDeliveries } from '../../actions/webhooks.ts';
import { perform } from '../../http/route.ts';
import { defineTool } from '../tool.ts';

const watchlistId = z.string().min(1).max(100).describe("the watchlist's id (list_watchlists)");
const webhookId = z.string().min(1).max(100).describe("the webhook's id (list_webhooks)");

const describeEndpoint = (hook: WebhookEndpoint) =>
  `- ${hook.url} [${hook.id}]: ${hook.status === 'active' ? 'active' : `disabled (${hook.disabledReason})`}` +
  (hook.lastDelivery
    ? `; last delivery ${hook.lastDelivery.eventType} ${hook.lastDelivery.state}${hook.lastDelivery.lastError ? `: ${hook.lastDelivery.lastError}` : ''}`
    : '; nothing delivered yet');

export const listWebhooksTool = defineTool({
  name: 'list_webhooks',
  title: "A watchlist's webhooks",
  description:
    'The webhooks of one of your watchlists: URL, active or disabled (and why), the last delivery. Their secrets are never shown (only once, to whoever adds one with POST /api/watchlists/{id}/webhooks).',
  input: z.object({ watchlistId }),
  output: z.object({ webhooks: z.array(webhookEndpoint) }),
  access: listWebhooks.access,
  readOnly: true,
  async run(args, ctx) {
    const webhooks = await perform(listWebhooks, ctx, args.watchlistId);
    return { data: { webhooks }, text: webhooks.length ? webhooks.map(describeEndpoint).join('\n') : 'This watchlist has no webhooks.' };
  },
});

export const webhookDeliveriesTool = defineTool({
  name: 'webhook_deliveries',
  title: "A webhook's delivery log",
  description: `A webhook's deliveries, newest first (at most ${DELIVERY_LOG_PAGE}), each with every attempt: time, HTTP status, duration, error. Pass next as before for older ones.`,
  input: z.object({
    watchlistId,
    webhookId,
    before: z
      .string()
      .regex(/^\d{1,18}$/)
      .optional()
      .describe('the next of the previous answer'),
    limit: z.number().int().min(1).max(DELIVERY_LOG_PAGE).default(20),
  }),
  output: z.object({ deliveries: z.array(webhookDelivery), next: z.string().nullable() }),
  access: webhookDeliveries.access,
  readOnly: true,
  async run(args, ctx) {
    const data = await perform(webhookDeliveries, ctx, args);
    return {
      data,
      text: data.deliveries.length
        ? data.deliveries
            .map(
              (d) =>
                `- ${d.createdAt} ${d.eventType} ${d.state}, ${d.attempts.length} attempts${d.attempts.at(-1)?.error ? `: ${d.attempts.at(-1)!.error}` : ''}`,
            )
            .join('\n')
        : 'No deliveries yet.',
    };
  },
});

export const testWebhookTool = defineTool({
  name: 'test_webhook',
  title: 'Send a test event',
  description:
    'Sends a test event (type webhook.test) to one of your webhooks now; webhook_deliveries then shows how the receiver answered.',
  input: z.object({ watchlistId, webhookId }),
  output: z.object({ id: z.string(), messageId: z.string(), createdAt: z.string() }),
  access: testWebhook.access,
  readOnly: false,
  async run(args, ctx) {
    const data = await perform(testWebhook, ctx, args);
    return { data, text: `Test event ${data.messageId} queued; see webhook_deliveries.` };
  },
});
