import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookAttempts } from '../../core/metrics.ts';
import { changesById } from '../../core/watchlists/change.ts';
import { connectMcp, textOf } from '../mcp/support.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../kit/servers/webhook-receiver.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError } from '../support/http-helpers.ts';
import { startSearchStack } from '../support/stack.ts';
import { channelIdFor } from '../support/subtitles.ts';
import { scheduleShard } from '../../core/webhooks/deliveryJob.ts';
import { createWatchlist, deliveriesOf, logDeletion, queueDeliveries, waitingJobAt } from '../support/webhooks.ts';

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
/** The same database, an API with the default WEBHOOK_ALLOW_PRIVATE (off). */
let publicOnly: TestApi;
let receiver: WebhookReceiver;
type User = { key: string; userId: string };
let owner: User;
let other: User;
let reader: User;
let watchlistId: string;

const make = async (options: Parameters<typeof createKeyedUser>[1] = {}): Promise<User> => {
  const created = await createKeyedUser(db.sql, options);
  return { key: created.key, userId: created.user.id };
};

const call = (api: TestApi, path: string, key: string | undefined, init: { method?: string; body?: unknown } = {}) =>
  api.call(path, {
    method: init.method ?? 'GET',
    ...(key ? { key } : {}),
    ...(init.body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(init.body) }),
  });

/** Webhook attempts of this process with this outcome, as `/metrics` shows them. */
const attemptsCounted = async (outcome: string) =>
  (await webhookAttempts.get()).values.find((value) => value.labels.outcome === outcome)?.value ?? 0;

const hooks = (id = watchlistId) => `/api/watchlists/${id}/webhooks`;

async function addWebhook(url: string, user = owner, id = watchlistId) {
  const created = await call(stack.api, hooks(id), user.key, { method: 'POST', body: { url } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data as { id: string; secret: string; url: string; status: string };
}

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startSearchStack(db, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  publicOnly = await startTestApi(db.sql);
  owner = await make();
  other = await make();
  reader = await make({ scope: 'L1' });
  watchlistId = await createWatchlist(db.sql, owner.userId);
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await publicOnly?.close();
  await stack?.close();
  await db?.drop();
});

describe('webhook endpoints', () => {
  it('answers the secret once, keeps it sealed with the server key, and never lists it', async () => {
    const created = await addWebhook(`${receiver.url}?once`);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(created.status).toBe('active');
    const [row] = await db.sql<
      { secretSealed: Buffer }[]
    >`select secret_sealed as "secretSealed" from webhook_endpoints where id = ${created.id}`;
    expect(row!.secretSealed.toString('latin1')).not.toContain(created.secret.slice(6));
    expect(stack.api.services.serverKey.open(row!.secretSealed)).toBe(created.secret);
    const listed = await call(stack.api, hooks(), owner.key);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret.slice(6));
    expect(listed.body.data.webhooks.map((hook: { id: string }) => hook.id)).toContain(created.id);
    await call(stack.api, `${hooks()}/${created.id}`, owner.key, { method: 'DELETE' });
  });

  it('refuses URLs that are not http(s), carry credentials or exceed 2000 characters', async () => {
    for (const url of [
      'ftp://example.org/hook',
      'https://user:pass@example.org/hook',
      `https://example.org/${'a'.repeat(2000)}`,
      'not a url',
    ]) {
      const refused = await call(stack.api, hooks(), owner.key, { method: 'POST', body: { url } });
      expectError(refused, 400, 'INVALID_INPUT');
    }
  });

  it('refuses a private or loopback receiver unless WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook', 'http://10.1.2.3/hook']) {
      const refused = await call(publicOnly, hooks(), owner.key, { method: 'POST', body: { url } });
      expect(expectError(refused, 400, 'INVALID_INPUT').message).toContain('WEBHOOK_ALLOW_PRIVATE');
    }
    const [row] = await db.sql<{ count: number }[]>`select count(*)::int from webhook_endpoints where url like '%:9/hook'`;
    expect(row!.count).toBe(0);
  });

  it("is the owner's alone: another caller gets 404, anonymous 401, an L1 key may read but not add", async () => {
    const hook = await addWebhook(`${receiver.url}?owned`);
    expectError(await call(stack.api, hooks(), other.key), 404, 'NOT_FOUND');
    expectError(await call(stack.api, hooks(), other.key, { method: 'POST', body: { url: receiver.url } }), 404, 'NOT_FOUND');
    for (const [method, path] of [
      ['DELETE', `${hooks()}/${hook.id}`],
      ['POST', `${hooks()}/${hook.id}/test`],
      ['POST', `${hooks()}/${hook.id}/enable`],
      ['GET', `${hooks()}/${hook.id}/deliveries`],
    ] as const)
      expectError(await call(stack.api, path, other.key, { method }), 404, 'NOT_FOUND');
    expectError(await call(stack.api, hooks(), undefined), 401, 'API_KEY_REQUIRED');
    const readerList = await createWatchlist(db.sql, reader.userId);
    expect((await call(stack.api, hooks(readerList), reader.key)).status).toBe(200);
    expectError(await call(stack.api, hooks(readerList), reader.key, { method: 'POST', body: { url: receiver.url } }), 403, 'FORBIDDEN');
    expectError(await call(stack.api, `${hooks()}/not-a-uuid/deliveries`, owner.key), 404, 'NOT_FOUND');
    await call(stack.api, `${hooks()}/${hook.id}`, owner.key, { method: 'DELETE' });
  });

  it("counts against the tier's webhooks allowance", async () => {
    const limited = await make();
    const list = await createWatchlist(db.sql, limited.userId);
    await db.sql`update tier_allowances set max_count = 1 where tier = 'pro' and allowance_name = 'webhooks'`;
    try {
      await addWebhook(`${receiver.url}?first`, limited, list);
      const refused = await call(stack.api, hooks(list), limited.key, { method: 'POST', body: { url: `${receiver.url}?second` } });
      expect(expectError(refused, 403, 'FORBIDDEN').details).toMatchObject({ allowance: 'webhooks', max: 1, held: 1 });
    } finally {
      await db.sql`update tier_allowances set max_count = 20 where tier = 'pro' and allowance_name = 'webhooks'`;
    }
  });
});

describe('deliveries', () => {
  it('POSTs each change as {type, timestamp, data} signed per Standard Webhooks, and logs it', async () => {
    const list = await createWatchlist(db.sql, owner.userId, 'Signed');
    const hook = await addWebhook(receiver.url, owner, list);
    receiver.secret = hook.secret;
    receiver.received.length = 0;
    const deliveredBefore = await attemptsCounted('delivered');
    const changeId = await logDeletion(db.sql);
    await queueDeliveries(db.sql, changeId, list);
    const delivery = await eventually(
      async () => (await deliveriesOf(db.sql, hook.id)).find((row) => row.state === 'delivered'),
      'the delivery',
    );
    await eventually(async () => (await attemptsCounted('delivered')) > deliveredBefore, 'the attempt counted for /metrics');
    const [received] = receiver.received;
    expect(received).toMatchObject({ id: delivery.messageId, verified: true });
    const [change] = await changesById(db.sql, [changeId]);
    expect(received!.payload).toEqual({ type: 'video.deleted', timestamp: change!.recordedAt, data: change });
    expect(Math.abs(Number(received!.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(received!.signature).toMatch(/^v1,[A-Za-z0-9+/=]+$/);

    const log = await call(stack.api, `${hooks(list)}/${hook.id}/deliveries`, owner.key);
    expect(log.status).toBe(200);
    expect(log.body.data.deliveries[0]).toMatchObject({
      messageId: delivery.messageId,
      eventType: 'video.deleted',
      changeId,
      state: 'delivered',
      nextAttemptAt: null,
      attempts: [{ attempt: 1, status: 204, error: null }],
    });
    const listed = await call(stack.api, hooks(list), owner.key);
    expect(listed.body.data.webhooks[0]).toMatchObject({ status: 'active', lastDelivery: { state: 'delivered', lastStatus: 204 } });
  });

  it('sends a test event on request: no change, type webhook.test, logged like any delivery', async () => {
    const list = await createWatchlist(db.sql, owner.userId, 'Tested');
    const hook = await addWebhook(`${receiver.url}?test`, owner, list);
    receiver.secret = hook.secret;
    const sent = await call(stack.api, `${hooks(list)}/${hook.id}/test`, owner.key, { method: 'POST' });
    expect(sent.status).toBe(202);
    const received = await eventually(
      () => receiver.received.find((delivery) => delivery.id === sent.body.data.messageId),
      'the test event',
    );
    expect(received.verified).toBe(true);
    expect(received.payload).toMatchObject({ type: 'webhook.test', data: { test: true, watchlistId: list, webhookId: hook.id } });
    const [row] = await deliveriesOf(db.sql, hook.id);
    expect(row).toMatchObject({ changeId: null, messageId: sent.body.data.messageId });
    await eventually(async () => (await deliveriesOf(db.sql, hook.id))[0]!.state === 'delivered', 'the test delivery logged');
  });

  it('pages the delivery log newest first', async () => {
    const list = await createWatchlist(db.sql, owner.userId, 'Paged');
    const hook = await addWebhook(`${receiver.url}?paged`, owner, list);
    receiver.secret = hook.secret;
    for (let n = 0; n < 5; n++) await queueDeliveries(db.sql, await logDeletion(db.sql), list);
    await eventually(async () => (await deliveriesOf(db.sql, hook.id)).every((row) => row.state === 'delivered'), 'five deliveries');
    const ids = (await deliveriesOf(db.sql, hook.id)).map((row) => row.id).reverse();
    const first = await call(stack.api, `${hooks(list)}/${hook.id}/deliveries?limit=3`, owner.key);
    expect(first.body.data.deliveries.map((row: { id: string }) => row.id)).toEqual(ids.slice(0, 3));
    const second = await call(stack.api, `${hooks(list)}/${hook.id}/deliveries?limit=3&before=${first.body.data.next}`, owner.key);
    expect(second.body.data.deliveries.map((row: { id: string }) => row.id)).toEqual(ids.slice(3));
    expect(second.body.data.next).toBeNull();
  });

  it('a delivery is sent at once, even when its shard job waited for a later time; scheduling never moves that job later', async () => {
    const list = await createWatchlist(db.sql, owner.userId, 'Prompt');
    const hook = await addWebhook(`${receiver.url}?prompt`, owner, list);
    receiver.secret = hook.secret;
    const [{ shard }] = await db.sql<[{ shard: number }]>`select delivery_shard as shard from webhook_endpoints where id = ${hook.id}`;
    // As a run that saw another run's claim (hidden for a minute) would leave it.
    const later = new Date(Date.now() + 600_000);
    await db.sql`select graphile_worker.add_job('deliver_webhooks', json_build_object('shard', ${shard}::int),
      job_key => ${`deliver_webhooks:${shard}`}, run_at => ${later})`;
    await scheduleShard(db.sql, shard, new Date(Date.now() + 900_000));
    expect((await waitingJobAt(db.sql, hook.id))!.getTime()).toBe(later.getTime());
    await queueDeliveries(db.sql, await logDeletion(db.sql), list);
    await eventually(async () => (await deliveriesOf(db.sql, hook.id))[0]?.state === 'delivered', 'the delivery sent at once');
  });

  it('re-enables a disabled webhook; deleting one takes its deliveries with it', async () => {
    const list = await createWatchlist(db.sql, owner.userId, 'Toggled');
    const hook = await addWebhook(`${receiver.url}?toggled`, owner, list);
    await db.sql`update webhook_endpoints set disabled_at = now(), disabled_reason = 'the receiver answered 410 Gone', failing_since = now() where id = ${hook.id}`;
    const disabled = await call(stack.api, hooks(list), owner.key);
    expect(disabled.body.data.webhooks[0]).toMatchObject({ status: 'disabled', disabledReason: 'the receiver answered 410 Gone' });
    expectError(await call(stack.api, `${hooks(list)}/${hook.id}/test`, owner.key, { method: 'POST' }), 400, 'INVALID_INPUT');
    const enabled = await call(stack.api, `${hooks(list)}/${hook.id}/enable`, owner.key, { method: 'POST' });
    expect(enabled.body.data).toMatchObject({ status: 'active', disabledAt: null, disabledReason: null, failingSince: null });
    await queueDeliveries(db.sql, await logDeletion(db.sql), list);
    const deleted = await call(stack.api, `${hooks(list)}/${hook.id}`, owner.key, { method: 'DELETE' });
    expect(deleted.body.data).toEqual({ id: hook.id, deleted: true });
    expect(await deliveriesOf(db.sql, hook.id)).toEqual([]);
    expectError(await call(stack.api, `${hooks(list)}/${hook.id}`, owner.key, { method: 'DELETE' }), 404, 'NOT_FOUND');
  });

  it('delivers a change of a watched channel through the fan-out, once per endpoint', async () => {
    const own = await startWebhookReceiver();
    try {
      const list = await createWatchlist(db.sql, owner.userId, 'Fanned out');
      const hook = await addWebhook(own.url, owner, list);
      own.secret = hook.secret;
      await db.sql`insert into watchlist_items (watchlist_id, kind, channel_id) values (${list}, 'channel', ${channelIdFor('webhooks')})`;
      const changeId = await logDeletion(db.sql);
      const received = await eventually(
        () => own.received.find((delivery) => delivery.payload.data.id === changeId),
        'the fanned-out change',
      );
      expect(received).toMatchObject({ verified: true, payload: { type: 'video.deleted' } });
      await eventually(async () => (await deliveriesOf(db.sql, hook.id)).every((row) => row.state === 'delivered'), 'logged as delivered');
      expect((await deliveriesOf(db.sql, hook.id)).map((row) => row.changeId)).toEqual([changeId]);
      await db.sql`delete from watchlists where id = ${list}`;
    } finally {
      await own.close();
    }
  });

  it('MCP: lists webhooks without their secrets, sends a test event and reads the log; another owner is refused', async () => {
    const list = await createWatchlist(db.sql, owner.userId, 'Over MCP');
    const hook = await addWebhook(`${receiver.url}?mcp`, owner, list);
    receiver.secret = hook.secret;
    const client = await connectMcp(stack.api.url, owner.key);
    const stranger = await connectMcp(stack.api.url, other.key);
    try {
      const listed = await client.callTool({ name: 'list_webhooks', arguments: { watchlistId: list } });
      expect(listed.structuredContent).toMatchObject({ webhooks: [{ id: hook.id, status: 'active' }] });
      expect(JSON.stringify(listed)).not.toContain(hook.secret.slice(6));
      const sent = await client.callTool({ name: 'test_webhook', arguments: { watchlistId: list, webhookId: hook.id } });
      const messageId = (sent.structuredContent as { messageId: string }).messageId;
      await eventually(() => receiver.received.find((delivery) => delivery.id === messageId && delivery.verified), 'the test event');
      const log = await eventually(async () => {
        const read = await client.callTool({ name: 'webhook_deliveries', arguments: { watchlistId: list, webhookId: hook.id } });
        const deliveries = (read.structuredContent as { deliveries: { messageId: string; state: string }[] }).deliveries;
        return deliveries[0]?.state === 'delivered' ? deliveries : undefined;
      }, 'the log over MCP');
      expect(log.map((delivery) => delivery.messageId)).toEqual([messageId]);
      const refused = await stranger.callTool({ name: 'list_webhooks', arguments: { watchlistId: list } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('NOT_FOUND');
    } finally {
      await client.close();
      await stranger.close();
    }
  });
});
