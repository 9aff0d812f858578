/**
 * A watchlist's webhooks as its owner manages them: add one (its secret shown once), list them, delete
 * one, enable a disabled one, send a test event, read the delivery log. The REST routes of
 * api/routes/webhooks.ts perform these; another owner's watchlist is as unknown as a missing one (404).
 */
import { notFound } from '../../core/errors.ts';
import { createEndpoint } from '../../core/webhooks/createEndpoint.ts';
import { deleteEndpoint } from '../../core/webhooks/deleteEndpoint.ts';
import { deliveryLog } from '../../core/webhooks/deliveryLog.ts';
import { enableEndpoint } from '../../core/webhooks/enableEndpoint.ts';
import { selectEndpoints } from '../../core/webhooks/endpoint.ts';
import { refuseNonPublicReceiver } from '../../core/webhooks/endpointUrl.ts';
import { findOwnEndpoint } from '../../core/webhooks/ownEndpoint.ts';
import { sendTestEvent } from '../../core/webhooks/sendTestEvent.ts';
import { findOwnWatchlist } from '../../core/watchlists/ownWatchlist.ts';
import { defineAction, type ActionContext } from '../http/route.ts';
import { watchlistOwner, watchlistReadAccess as readAccess, watchlistWriteAccess as writeAccess } from './watchlists.ts';

/** The caller's watchlist `watchlistId`, or 404. */
async function ownWatchlistId({ deps, caller }: ActionContext, watchlistId: string): Promise<string> {
  const watchlist = await findOwnWatchlist(deps.sql, watchlistOwner(caller), watchlistId);
  if (!watchlist) throw notFound(`no watchlist ${watchlistId}`);
  return watchlist.id;
}

const noWebhook = (webhookId: string) => notFound(`this watchlist has no webhook ${webhookId}`);

type WebhookInput = { watchlistId: string; webhookId: string };

export const createWebhook = defineAction({
  what: 'adding a webhook',
  access: writeAccess,
  async run(ctx, input: { watchlistId: string; url: string }) {
    const { deps, caller } = ctx;
    // The watchlist first: nobody but its owner learns anything of how a URL resolves.
    await ownWatchlistId(ctx, input.watchlistId);
    if (!deps.config.WEBHOOK_ALLOW_PRIVATE) await refuseNonPublicReceiver(input.url);
    const created = await createEndpoint(deps.sql, deps.serverKey, {
      ownerId: watchlistOwner(caller),
      watchlistId: input.watchlistId,
      url: input.url,
    });
    if (!created) throw notFound(`no watchlist ${input.watchlistId}`);
    return created;
  },
});

export const listWebhooks = defineAction({
  what: 'listing webhooks',
  access: readAccess,
  async run(ctx, watchlistId: string) {
    return selectEndpoints(ctx.deps.sql, 'e.watchlist_id = $1', [await ownWatchlistId(ctx, watchlistId)]);
  },
});

export const deleteWebhook = defineAction({
  what: 'deleting a webhook',
  access: writeAccess,
  async run(ctx, input: WebhookInput) {
    if (!(await deleteEndpoint(ctx.deps.sql, await ownWatchlistId(ctx, input.watchlistId), input.webhookId)))
      throw noWebhook(input.webhookId);
    return { id: input.webhookId, deleted: true as const };
  },
});

export const enableWebhook = defineAction({
  what: 'enabling a webhook',
  access: writeAccess,
  async run(ctx, input: WebhookInput) {
    const enabled = await enableEndpoint(ctx.deps.sql, await ownWatchlistId(ctx, input.watchlistId), input.webhookId);
    if (!enabled) throw noWebhook(input.webhookId);
    return enabled;
  },
});

export const testWebhook = defineAction({
  what: 'sending a test event',
  access: writeAccess,
  async run(ctx, input: WebhookInput) {
    const delivery = await sendTestEvent(ctx.deps.sql, await ownWatchlistId(ctx, input.watchlistId), input.webhookId);
    if (!delivery) throw noWebhook(input.webhookId);
    return delivery;
  },
});

export const webhookDeliveries = defineAction({
  what: "reading a webhook's deliveries",
  access: readAccess,
  async run(ctx, input: WebhookInput & { before: string | undefined; limit: number }) {
    const watchlistId = await ownWatchlistId(ctx, input.watchlistId);
    const endpoint = await findOwnEndpoint(ctx.deps.sql, watchlistId, input.webhookId);
    if (!endpoint) throw noWebhook(input.webhookId);
    return deliveryLog(ctx.deps.sql, endpoint.id, input);
  },
});
