import { z } from 'zod';
import { DELIVERY_LOG_PAGE, webhookDelivery } from '../../core/webhooks/deliveryLog.ts';
import { webhookEndpoint } from '../../core/webhooks/endpoint.ts';
import { endpointUrl } from '../../core/webhooks/endpointUrl.ts';
import { createWebhook, deleteWebhook, enableWebhook, listWebhooks, testWebhook, webhookDeliveries } from '../actions/webhooks.ts';
import { wholeNumber } from '../http/input.ts';
import { defineRoute, perform, privateCache } from '../http/route.ts';

const TAG = 'Webhooks';
const BASE = '/api/watchlists/:id/webhooks';
const SEE = 'Signed per Standard Webhooks; see api/REFERENCE.md, Webhooks, for the payload, verification, retries and disabling.';

const watchlistParams = z.strictObject({ id: z.string().describe("the watchlist's id") });
const webhookParams = z.strictObject({ id: z.string().describe("the watchlist's id"), webhookId: z.string() });

const createRoute = defineRoute({
  method: 'POST',
  path: BASE,
  tag: TAG,
  summary: 'Add a webhook to your watchlist: every change is POSTed to its URL, signed; answers the signing secret once',
  description: `Body {url}: http or https, no credentials in it, at most 2000 characters, on a public address (a private or loopback one is refused unless the operator sets WEBHOOK_ALLOW_PRIVATE=true). The answer's secret (whsec_…) is never shown again: keep it to verify deliveries. Counts against your tier's webhooks allowance (403 when it is used up). ${SEE}`,
  auth: 'key',
  ...createWebhook.access,
  params: watchlistParams,
  body: z.strictObject({ url: endpointUrl }),
  response: webhookEndpoint.extend({ secret: z.string().describe('whsec_…: shown this once; it signs every delivery') }),
  status: 201,
  errors: ['NOT_FOUND', 'FORBIDDEN'],
  handler: (ctx) => perform(createWebhook, ctx, { watchlistId: ctx.params.id, url: ctx.body.url }),
});

const listRoute = defineRoute({
  method: 'GET',
  path: BASE,
  tag: TAG,
  summary: "Your watchlist's webhooks: active or disabled (and why), with the last delivery",
  auth: 'key',
  ...listWebhooks.access,
  cache: privateCache,
  params: watchlistParams,
  response: z.object({ webhooks: z.array(webhookEndpoint) }),
  errors: ['NOT_FOUND'],
  handler: async (ctx) => ({ webhooks: await perform(listWebhooks, ctx, ctx.params.id) }),
});

const deleteRoute = defineRoute({
  method: 'DELETE',
  path: `${BASE}/:webhookId`,
  tag: TAG,
  summary: 'Delete a webhook, its pending deliveries and its delivery log',
  auth: 'key',
  ...deleteWebhook.access,
  params: webhookParams,
  response: z.object({ id: z.string(), deleted: z.literal(true) }),
  errors: ['NOT_FOUND'],
  handler: (ctx) => perform(deleteWebhook, ctx, { watchlistId: ctx.params.id, webhookId: ctx.params.webhookId }),
});

const enableRoute = defineRoute({
  method: 'POST',
  path: `${BASE}/:webhookId/enable`,
  tag: TAG,
  summary: 'Enable a disabled webhook: changes from now on are delivered (what was cancelled meanwhile stays cancelled)',
  auth: 'key',
  ...enableWebhook.access,
  params: webhookParams,
  response: webhookEndpoint,
  errors: ['NOT_FOUND'],
  handler: (ctx) => perform(enableWebhook, ctx, { watchlistId: ctx.params.id, webhookId: ctx.params.webhookId }),
});

const testRoute = defineRoute({
  method: 'POST',
  path: `${BASE}/:webhookId/test`,
  tag: TAG,
  summary: 'Send a test event (type webhook.test) now; follow it in the delivery log',
  description: `Queued at once and logged like any delivery (retried the same way when it fails); 400 when the webhook is disabled. ${SEE}`,
  auth: 'key',
  ...testWebhook.access,
  params: webhookParams,
  response: z.object({ id: z.string(), messageId: z.string().describe('its webhook-id header'), createdAt: z.string() }),
  status: 202,
  errors: ['NOT_FOUND'],
  handler: (ctx) => perform(testWebhook, ctx, { watchlistId: ctx.params.id, webhookId: ctx.params.webhookId }),
});

const deliveriesRoute = defineRoute({
  method: 'GET',
  path: `${BASE}/:webhookId/deliveries`,
  tag: TAG,
  summary: "A webhook's delivery log, newest first: each delivery with every attempt (time, status, duration, error)",
  description: "Pass the answer's `next` as `before` for the following page; `next` is null on the last.",
  auth: 'key',
  ...webhookDeliveries.access,
  cache: privateCache,
  params: webhookParams,
  query: z.strictObject({
    before: z
      .string()
      .regex(/^\d{1,18}$/, { message: 'expected the next cursor of the previous page' })
      .optional(),
    limit: wholeNumber('limit', 1, DELIVERY_LOG_PAGE, 20),
  }),
  response: z.object({ deliveries: z.array(webhookDelivery), next: z.string().nullable() }),
  errors: ['NOT_FOUND'],
  handler: (ctx) => perform(webhookDeliveries, ctx, { watchlistId: ctx.params.id, webhookId: ctx.params.webhookId, ...ctx.query }),
});

/** In matching order: the deliveries and actions of one webhook before the webhook itself. */
export const webhookRoutes = [createRoute, listRoute, testRoute, enableRoute, deliveriesRoute, deleteRoute];
