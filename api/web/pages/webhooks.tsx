import type { VNode } from 'preact';
import { z } from 'zod';
import type { WebhookDelivery } from '../../../core/webhooks/deliveryLog.ts';
import type { WebhookEndpoint } from '../../../core/webhooks/endpoint.ts';
import { endpointUrl } from '../../../core/webhooks/endpointUrl.ts';
import { createWebhook, deleteWebhook, enableWebhook, testWebhook, webhookDeliveries } from '../../actions/webhooks.ts';
import { perform } from '../../http/route.ts';
import { FormToken, type FormContext } from '../formToken.tsx';
import { keepNotice } from '../notice.ts';
import { keepWebhookSecret } from '../oneTimeKey.ts';
import { definePage, redirect, type PageContext } from '../page.tsx';

/** Deliveries of an endpoint's log the page shows (GET /api/watchlists/:id/webhooks/:webhookId/deliveries pages through all). */
const LOGGED_DELIVERIES = 10;

/** What the webhook forms did, said once on /watchlists. */
export const WEBHOOK_NOTICES = {
  'webhook-deleted': 'Webhook deleted: nothing more is sent to it.',
  'webhook-enabled': 'Webhook enabled again: deliveries resume.',
  'webhook-tested': 'Test event queued: it appears in the delivery log once sent (reload to see it).',
} as const;

export type ShownWebhook = WebhookEndpoint & { deliveries: WebhookDelivery[] };

/** A watchlist's webhooks, each with its delivery log, for its section of /watchlists. */
export async function webhooksOf(ctx: PageContext<unknown, unknown, unknown>, webhooks: WebhookEndpoint[]): Promise<ShownWebhook[]> {
  return Promise.all(
    webhooks.map(async (webhook) => ({
      ...webhook,
      deliveries: (
        await perform(webhookDeliveries, ctx, {
          watchlistId: webhook.watchlistId,
          webhookId: webhook.id,
          before: undefined,
          limit: LOGGED_DELIVERIES,
        })
      ).deliveries,
    })),
  );
}

const webhookParams = z.strictObject({ watchlistId: z.string().max(64), webhookId: z.string().max(64) });
const webhookPath = (webhook: Pick<WebhookEndpoint, 'watchlistId' | 'id'>, what: string) =>
  `/watchlists/${webhook.watchlistId}/webhooks/${webhook.id}/${what}`;
const dateTime = (iso: string) => iso.slice(0, 19).replace('T', ' ');

/** A small form of one button that posts to `action`. */
function ButtonForm({ ctx, action, label, secondary = true }: { ctx: FormContext; action: string; label: string; secondary?: boolean }) {
  return (
    <form method="post" action={action}>
      <FormToken ctx={ctx} action={action} />
      <button type="submit" class={secondary ? 'secondary small' : 'small'}>
        {label}
      </button>
    </form>
  );
}

function DeliveryLog({ deliveries }: { deliveries: WebhookDelivery[] }): VNode {
  if (deliveries.length === 0) return <p class="muted">Nothing sent yet.</p>;
  return (
    <div class="table-scroll">
      <table class="deliveries">
        <caption class="visually-hidden">Latest deliveries, newest first, each attempt on its own line</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.flatMap((delivery) =>
            delivery.attempts.length === 0
              ? [
                  <tr key={delivery.id} data-state={delivery.state}>
                    <td>{dateTime(delivery.createdAt)}</td>
                    <td>{delivery.eventType}</td>
                    <td colSpan={4}>{delivery.state === 'pending' ? 'waiting to be sent' : delivery.state}</td>
                  </tr>,
                ]
              : delivery.attempts.map((attempt) => (
                  <tr key={`${delivery.id}-${attempt.attempt}`} data-state={delivery.state}>
                    <td>{dateTime(attempt.attemptedAt)}</td>
                    <td>{delivery.eventType}</td>
                    <td>{attempt.attempt}</td>
                    <td>{attempt.status ?? 'no answer'}</td>
                    <td>{attempt.durationMs} ms</td>
                    <td>{attempt.error ?? ''}</td>
                  </tr>
                )),
          )}
        </tbody>
      </table>
    </div>
  );
}

/** The webhooks part of a watchlist's section: each receiver, its state and log, and the form that adds one. */
export function Webhooks({
  ctx,
  watchlistId,
  webhooks,
  newSecret,
}: {
  ctx: FormContext;
  watchlistId: string;
  webhooks: ShownWebhook[];
  /** A webhook just added: its signing secret, shown this once. */
  newSecret: { webhookId: string; secret: string } | undefined;
}): VNode {
  const add = `/watchlists/${watchlistId}/webhooks`;
  return (
    <>
      {webhooks.map((webhook) => (
        <div class="webhook" id={`webhook-${webhook.id}`} key={webhook.id} data-status={webhook.status}>
          <p class="webhook-url">
            <code>{webhook.url}</code>{' '}
            {webhook.status === 'active' ? <span class="badge live">Active</span> : <span class="badge deleted">Disabled</span>}
          </p>
          {newSecret?.webhookId === webhook.id ? (
            <div class="notice" role="status">
              <p>Its signing secret, shown only this once: copy it now to verify deliveries (Standard Webhooks).</p>
              <p class="new-key">
                <code id={`secret-${webhook.id}`}>{newSecret.secret}</code>
                <button type="button" class="secondary" data-copy={`secret-${webhook.id}`} hidden>
                  Copy
                </button>
              </p>
            </div>
          ) : null}
          {webhook.disabledAt ? (
            <div class="error-box">
              <p>
                Disabled {dateTime(webhook.disabledAt)}: {webhook.disabledReason ?? 'deliveries kept failing'}. Nothing is sent until you
                enable it again.
              </p>
            </div>
          ) : webhook.failingSince ? (
            <p class="muted">Failing since {dateTime(webhook.failingSince)}: retried with growing waits, disabled after 3 days.</p>
          ) : null}
          <div class="inline-form">
            {webhook.status === 'active' ? (
              <ButtonForm ctx={ctx} action={webhookPath(webhook, 'test')} label="Send a test event" />
            ) : (
              <ButtonForm ctx={ctx} action={webhookPath(webhook, 'enable')} label="Enable again" secondary={false} />
            )}
            <ButtonForm ctx={ctx} action={webhookPath(webhook, 'delete')} label="Delete the webhook" />
          </div>
          <details class="delivery-log">
            <summary>Delivery log</summary>
            <DeliveryLog deliveries={webhook.deliveries} />
          </details>
        </div>
      ))}
      <form method="post" action={add} class="inline-form add-webhook">
        <FormToken ctx={ctx} action={add} />
        <label for={`webhook-url-${watchlistId}`}>Receiver URL</label>
        <input id={`webhook-url-${watchlistId}`} name="url" type="url" required maxLength={2000} placeholder="https://…" />
        <button type="submit" class="secondary">
          Add a webhook
        </button>
      </form>
    </>
  );
}

const back = (ctx: PageContext<unknown, unknown, unknown>, watchlistId: string, notice?: keyof typeof WEBHOOK_NOTICES) => {
  if (notice) keepNotice(ctx.res, ctx.deps.config, notice);
  return redirect(`/watchlists#watchlist-${watchlistId}`);
};

/** Adds a webhook; its secret goes to /watchlists in a sealed one-time cookie (api/web/oneTimeKey.ts), shown there once. */
export const createWebhookPost = definePage({
  method: 'POST',
  path: '/watchlists/:watchlistId/webhooks',
  params: z.strictObject({ watchlistId: z.string().max(64) }),
  form: z.strictObject({ url: endpointUrl }),
  access: createWebhook.access,
  async handler(ctx) {
    const created = await perform(createWebhook, ctx, { watchlistId: ctx.params.watchlistId, url: ctx.form.url });
    keepWebhookSecret(ctx.req, ctx.res, ctx.deps.config, { webhookId: created.id, secret: created.secret });
    return redirect(`/watchlists#webhook-${created.id}`);
  },
});

/** A button of a webhook's: performs its action, then back to the watchlist with a notice. */
const webhookButtonPost = (
  step: 'test' | 'enable' | 'delete',
  action: typeof testWebhook | typeof enableWebhook | typeof deleteWebhook,
  notice: 'webhook-tested' | 'webhook-enabled' | 'webhook-deleted',
) =>
  definePage({
    method: 'POST',
    path: `/watchlists/:watchlistId/webhooks/:webhookId/${step}`,
    params: webhookParams,
    access: action.access,
    async handler(ctx) {
      await perform<z.infer<typeof webhookParams>, unknown>(action, ctx, ctx.params);
      return back(ctx, ctx.params.watchlistId, notice);
    },
  });

export const testWebhookPost = webhookButtonPost('test', testWebhook, 'webhook-tested');
export const enableWebhookPost = webhookButtonPost('enable', enableWebhook, 'webhook-enabled');
export const deleteWebhookPost = webhookButtonPost('delete', deleteWebhook, 'webhook-deleted');
