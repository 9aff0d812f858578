/**
 * Receivers that fail as real ones do, against the real worker (WORKER_CONCURRENCY 4): one that hangs,
 * answers 500, 410 or a redirect, or answers slowly; an endpoint failing for days; a watchlist or
 * user deleted while deliveries wait. Retries are made due by moving their time (makeDue), as the
 * passing of the schedule's wait would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint } from '../../core/webhooks/createEndpoint.ts';
import { postWebhook, webhookReceivers } from '../../core/webhooks/postWebhook.ts';
import { retryDelaySeconds } from '../../core/webhooks/retrySchedule.ts';
import { startWebhookReceiver, type ReceiverBehaviour, type WebhookReceiver } from '../kit/servers/webhook-receiver.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { startSearchStack } from '../support/stack.ts';
import { createWatchlist, deliveriesOf, logDeletion, makeDue, queueDeliveries, runAllShards, waitingJobAt } from '../support/webhooks.ts';

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let ownerId: string;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startSearchStack(db, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  ownerId = (await createKeyedUser(db.sql)).user.id;
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await stack?.close();
  await db?.drop();
});

/** A receiver behaving as told and an endpoint of a fresh watchlist (of `owner`) delivering to it. */
async function receiverWithEndpoint(behaviour: ReceiverBehaviour, owner = ownerId) {
  const receiver = await startWebhookReceiver(behaviour);
  receivers.push(receiver);
  const watchlistId = await createWatchlist(db.sql, owner);
  const endpoint = await createEndpoint(db.sql, stack.api.services.serverKey, { ownerId: owner, watchlistId, url: receiver.url });
  receiver.secret = endpoint!.secret;
  return { receiver, watchlistId, endpointId: endpoint!.id };
}

interface AttemptRow {
  attempt: number;
  attemptedAt: Date;
  status: number | null;
  durationMs: number;
  error: string | null;
}
const attemptsOf = (deliveryId: string) =>
  db.sql<AttemptRow[]>`
    select attempt, attempted_at as "attemptedAt", http_status as status, duration_ms as "durationMs", error
    from webhook_attempts where delivery_id = ${deliveryId} order by id`;

const endpointRow = async (id: string) =>
  (
    await db.sql<{ disabledAt: Date | null; disabledReason: string | null; failingSince: Date | null }[]>`
      select disabled_at as "disabledAt", disabled_reason as "disabledReason", failing_since as "failingSince"
      from webhook_endpoints where id = ${id}`
  )[0];

/** Waits until the endpoint's only (or first) delivery has made `attempts` attempts, and answers it. */
const afterAttempts = (endpointId: string, attempts: number, timeoutMs?: number) =>
  eventually(
    async () => (await deliveriesOf(db.sql, endpointId)).find((row) => row.attempts >= attempts),
    `attempt ${attempts}`,
    timeoutMs,
  );

const seconds = (from: Date, to: Date) => (to.getTime() - from.getTime()) / 1000;

describe('the retry schedule', () => {
  it('backs off exponentially, then every two hours', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(retryDelaySeconds)).toEqual([5, 30, 120, 600, 1800, 3600, 7200, 7200, 7200]);
  });
});

describe('receivers that fail', () => {
  it('answers 500: retried on the schedule with the same webhook-id, later changes waiting behind it, until delivered', async () => {
    const { receiver, endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'status', status: 500, body: 'boom' });
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    const first = await afterAttempts(endpointId, 1);
    expect(first.state).toBe('pending');
    const [attempt1] = await attemptsOf(first.id);
    expect(attempt1).toMatchObject({ attempt: 1, status: 500, error: 'answered 500: boom' });
    expect(seconds(attempt1!.attemptedAt, first.nextAttemptAt)).toBeCloseTo(retryDelaySeconds(1), 0);
    // Its shard's job waits no longer than the retry (another endpoint of the shard may want it sooner).
    const jobAt = await eventually(() => waitingJobAt(db.sql, endpointId), 'the job waiting for the retry');
    expect(jobAt.getTime()).toBeLessThanOrEqual(first.nextAttemptAt.getTime());
    expect((await endpointRow(endpointId))!.failingSince).not.toBeNull();

    // A change queued meanwhile waits behind the failed delivery, though its shard's job runs at once.
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    await runAllShards(db.sql);
    expect((await deliveriesOf(db.sql, endpointId)).map((row) => row.attempts)).toEqual([1, 0]);
    expect((await waitingJobAt(db.sql, endpointId))!.getTime()).toBeLessThanOrEqual(first.nextAttemptAt.getTime());

    await makeDue(db.sql, endpointId);
    const second = await afterAttempts(endpointId, 2);
    const attempt2 = (await attemptsOf(second.id))[1]!;
    expect(seconds(attempt2.attemptedAt, second.nextAttemptAt)).toBeCloseTo(retryDelaySeconds(2), 0);
    // One delivery probes a failing endpoint: the later change was not sent with it.
    expect((await deliveriesOf(db.sql, endpointId))[1]!.attempts).toBe(0);

    receiver.behaviour = { answer: 'ok' };
    await makeDue(db.sql, endpointId);
    await eventually(async () => (await deliveriesOf(db.sql, endpointId)).every((row) => row.state === 'delivered'), 'both delivered');
    const [retried, later] = await deliveriesOf(db.sql, endpointId);
    expect(receiver.received.filter((delivery) => delivery.id === retried!.messageId)).toHaveLength(3);
    expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
    expect(receiver.received.map((delivery) => delivery.id)).toContain(later!.messageId);
    expect((await endpointRow(endpointId))!.failingSince).toBeNull();
  });

  it('answers 410 Gone: the endpoint is disabled at once, its other pending deliveries cancelled', async () => {
    const { receiver, endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'status', status: 410 });
    // A delivery waiting for a later retry, as one queued before would be.
    await db.sql`
      insert into webhook_deliveries (endpoint_id, change_id, message_id, event_type, next_attempt_at)
      values (${endpointId}, ${await logDeletion(db.sql)}, 'msg_waiting410', 'video.deleted', now() + interval '1 hour')`;
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    const endpoint = await eventually(async () => (await endpointRow(endpointId))?.disabledAt && endpointRow(endpointId), 'disabled');
    expect(endpoint!.disabledReason).toContain('410 Gone');
    expect((await deliveriesOf(db.sql, endpointId)).map((row) => [row.state, row.attempts])).toEqual([
      ['cancelled', 0],
      ['failed', 1],
    ]);
    expect(receiver.requests).toBe(1);
  });

  it('redirects: not followed, a failure to retry', async () => {
    const target = await startWebhookReceiver();
    receivers.push(target);
    const { endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'redirect', location: target.url });
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    const delivery = await afterAttempts(endpointId, 1);
    expect(delivery.state).toBe('pending');
    const [attempt] = await attemptsOf(delivery.id);
    expect(attempt).toMatchObject({ status: 307, error: `answered 307 (redirects are not followed: to ${target.url})` });
    expect(target.requests).toBe(0);
  });

  it('hangs: given up after 10 s without holding the other endpoints back, then retried with the same webhook-id', {
    timeout: 60_000,
  }, async () => {
    const hanging = await receiverWithEndpoint({ answer: 'hang' });
    const healthy = await receiverWithEndpoint({ answer: 'ok' });
    await queueDeliveries(db.sql, await logDeletion(db.sql), hanging.watchlistId);
    await eventually(() => hanging.receiver.requests > 0, 'the hanging receiver reached');
    const started = Date.now();
    await queueDeliveries(db.sql, await logDeletion(db.sql), healthy.watchlistId);
    await eventually(() => healthy.receiver.received.length === 1, 'the healthy receiver delivered');
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await deliveriesOf(db.sql, hanging.endpointId))[0]!.attempts).toBe(0);

    const timedOut = await afterAttempts(hanging.endpointId, 1, 20_000);
    const [attempt] = await attemptsOf(timedOut.id);
    expect(attempt).toMatchObject({ status: null, error: 'no answer within 10 s' });
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(9_900);
    expect(attempt!.durationMs).toBeLessThan(12_000);
    expect(timedOut.state).toBe('pending');

    hanging.receiver.behaviour = { answer: 'ok' };
    await makeDue(db.sql, hanging.endpointId);
    await eventually(async () => (await deliveriesOf(db.sql, hanging.endpointId))[0]!.state === 'delivered', 'delivered on retry');
    expect(hanging.receiver.received.map((delivery) => [delivery.id, delivery.verified])).toEqual([[timedOut.messageId, true]]);
    expect(hanging.receiver.requests).toBe(2);
  });

  it('answers slowly (within the timeout): delivered, its duration logged', async () => {
    const { endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'slow', ms: 2000 });
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    const delivered = await eventually(
      async () => (await deliveriesOf(db.sql, endpointId)).find((row) => row.state === 'delivered'),
      'delivered',
    );
    const [attempt] = await attemptsOf(delivered.id);
    expect(attempt!.status).toBe(204);
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(1900);
  });
});

describe('giving up', () => {
  it('fails a delivery once its next try would fall after 24 hours', async () => {
    const { endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'status', status: 503 });
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    await afterAttempts(endpointId, 1);
    await db.sql`update webhook_deliveries set created_at = now() - interval '24 hours' where endpoint_id = ${endpointId}`;
    await makeDue(db.sql, endpointId);
    const delivery = await eventually(
      async () => (await deliveriesOf(db.sql, endpointId)).find((row) => row.state === 'failed'),
      'the delivery failed',
    );
    expect(delivery.attempts).toBe(2);
    expect((await endpointRow(endpointId))!.disabledAt).toBeNull();
  });

  it('disables an endpoint whose deliveries have all failed for 3 days, and tells its owner why', async () => {
    const { endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'status', status: 500 });
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    await afterAttempts(endpointId, 1);
    await db.sql`update webhook_endpoints set failing_since = now() - interval '2 days' where id = ${endpointId}`;
    await makeDue(db.sql, endpointId);
    await afterAttempts(endpointId, 2);
    expect((await endpointRow(endpointId))!.disabledAt).toBeNull();

    await db.sql`update webhook_endpoints set failing_since = now() - interval '3 days 1 minute' where id = ${endpointId}`;
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    await makeDue(db.sql, endpointId);
    const endpoint = await eventually(async () => (await endpointRow(endpointId))?.disabledAt && endpointRow(endpointId), 'disabled');
    expect(endpoint!.disabledReason).toMatch(/^every delivery failed for 3 days \(since .+\), the last with: answered 500/);
    const states = (await deliveriesOf(db.sql, endpointId)).map((row) => row.state);
    expect(states).not.toContain('pending');
    expect(states).toContain('cancelled');
  });

  it('stops when the watchlist or its owner is deleted while deliveries wait', async () => {
    const other = (await createKeyedUser(db.sql)).user.id;
    const byList = await receiverWithEndpoint({ answer: 'status', status: 500 });
    const byUser = await receiverWithEndpoint({ answer: 'status', status: 500 }, other);
    for (const { watchlistId } of [byList, byUser]) await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    for (const { endpointId } of [byList, byUser]) await afterAttempts(endpointId, 1);
    await db.sql`delete from watchlists where id = ${byList.watchlistId}`;
    await db.sql`delete from users where id = ${other}`;
    for (const { endpointId } of [byList, byUser]) expect(await deliveriesOf(db.sql, endpointId)).toEqual([]);
    // The shards' jobs run and find nothing of theirs.
    await runAllShards(db.sql);
    const [failedJobs] = await db.sql<{ count: number }[]>`
      select count(*)::int from graphile_worker._private_jobs where key like 'deliver_webhooks:%' and last_error is not null`;
    expect(failedJobs!.count).toBe(0);
    expect([byList.receiver.requests, byUser.receiver.requests]).toEqual([1, 1]);
  });
});

describe('the outbound guard', () => {
  it('refuses private and loopback receivers unless WEBHOOK_ALLOW_PRIVATE, by address and by name at connect time', async () => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const publicOnly = webhookReceivers(false);
    const byAddress = await postWebhook(publicOnly, receiver.url, {}, '{}');
    expect(byAddress).toMatchObject({ status: null, error: 'refused: 127.0.0.1 is not a public address (WEBHOOK_ALLOW_PRIVATE is off)' });
    const byName = await postWebhook(publicOnly, receiver.url.replace('127.0.0.1', 'localhost'), {}, '{}');
    expect(byName.error).toMatch(/^refused: localhost resolves to .+, not a public address/);
    expect(receiver.requests).toBe(0);
    expect(await postWebhook(webhookReceivers(true), receiver.url, {}, '{}')).toMatchObject({ status: 204, error: null });
  });
});

describe('runs of a shard at once', () => {
  it('leave an endpoint to the run sending to it: a delivery queued meanwhile follows the one in flight, each sent once', async () => {
    const { receiver, endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'slow', ms: 1500 });
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    await eventually(() => receiver.requests === 1, 'the first delivery in flight');
    // Queued with its shard's job while that job runs: the job key then names a fresh job, run beside it.
    await queueDeliveries(db.sql, await logDeletion(db.sql), watchlistId);
    await eventually(async () => (await deliveriesOf(db.sql, endpointId)).every((row) => row.state === 'delivered'), 'both delivered');
    const attempts = await db.sql<{ startedAt: number; endedAt: number }[]>`
      select extract(epoch from a.attempted_at)::float8 * 1000 as "startedAt",
        extract(epoch from a.attempted_at)::float8 * 1000 + a.duration_ms as "endedAt"
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpointId} order by d.id`;
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.startedAt).toBeGreaterThanOrEqual(attempts[0]!.endedAt);
    expect(receiver.requests).toBe(2);
  });
});

describe('throughput', () => {
  it('delivers many changes of one endpoint, a window at a time, each signed and logged once', async () => {
    const { receiver, endpointId, watchlistId } = await receiverWithEndpoint({ answer: 'ok' });
    const changeIds: string[] = [];
    for (let n = 0; n < 60; n++) changeIds.push(await logDeletion(db.sql));
    await db.sql.begin(async (tx) => {
      for (const changeId of changeIds) await queueDeliveries(tx, changeId, watchlistId);
    });
    await eventually(async () => (await deliveriesOf(db.sql, endpointId)).every((row) => row.state === 'delivered'), 'all delivered');
    expect(new Set(receiver.received.map((delivery) => delivery.id)).size).toBe(60);
    expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
    const [attempts] = await db.sql<{ count: number }[]>`
      select count(*)::int from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpointId}`;
    expect(attempts!.count).toBe(60);
  });
});
