/**
 * The deliver_webhooks job of one shard of endpoints: the shard's endpoints that are ready, several at
 * once, each sent its due deliveries oldest first, a window at a time, signed per Standard Webhooks; the
 * outcomes of a window are written in one statement. A failure ends the endpoint's round, and the
 * endpoint waits until the failed delivery's retry (head of line: a dead receiver is tried once per step
 * of the schedule, not once per change), then probes with one delivery before sending windows again.
 */
import { Webhook } from 'standardwebhooks';
import type { Sql } from '../db/database.ts';
import { webhookAttempts } from '../metrics.ts';
import type { ServerKey } from '../secrets/serverKey.ts';
import { CHANGE_COLUMNS, presentChange, type ChangeRow } from '../watchlists/change.ts';
import { scheduleShard } from './deliveryJob.ts';
import { postWebhook, type AttemptOutcome, type Receivers } from './postWebhook.ts';
import { DELIVERY_LIFETIME_HOURS, DISABLE_AFTER_FAILING_DAYS, retryDelaySeconds } from './retrySchedule.ts';

export interface DeliveryDeps {
  sql: Sql;
  serverKey: ServerKey;
  receivers: Receivers;
}

/** Deliveries sent at once to a healthy endpoint. */
const WINDOW = 16;
/** Endpoints of a shard sent to at once. */
const ENDPOINTS_AT_ONCE = 8;
/** Ready endpoints listed at a time: a burst's whole shard in one list, each list a scan of the shard's pending deliveries. */
const READY_LIST = 16 * ENDPOINTS_AT_ONCE;
/** How long a shard's job sends before a fresh job takes over, so one busy shard does not keep a worker to itself. */
const RUN_BUDGET_MS = 30_000;
/**
 * An arbitrary advisory-lock key, the first of two (the second: the endpoint's id hashed). A run takes
 * the session lock of each ready endpoint it will send to, and lets go when that endpoint's round ends:
 * what the run then reads as due is its own to send. A run of the same shard at once (a job queued while
 * this one runs: its key then names a fresh job) leaves those endpoints to it. Nothing is written, so a
 * crash forgets nothing: the locks go with the connection.
 */
const ENDPOINT_LOCK = 7_246_155;

interface Endpoint {
  id: string;
  watchlistId: string;
  url: string;
  secretSealed: Uint8Array;
  failing: boolean;
}

/** A due delivery with its change (the change columns null for a test event). */
type Due = { deliveryId: string; messageId: string; eventType: string; attempts: number; deliveryCreatedAt: string } & Omit<
  ChangeRow,
  'id'
> & { id: string | null };

/** A failed delivery of the endpoint waits for its retry: the endpoint's later deliveries wait behind it, but a test event. */
const HELD = `exists (select 1 from webhook_deliveries h
                 where h.endpoint_id = $1 and h.state = 'pending' and h.attempts > 0 and h.next_attempt_at > now())`;

/**
 * A from-item that makes the transaction of the one statement joining it commit without waiting for the
 * disk (the setting ends with that transaction). What a crash forgets is sent again with the same
 * webhook-id (at least once, as promised), which receivers drop as repeats: an outcome forgotten leaves
 * its delivery pending. Waiting for each window's flush cost PostgreSQL 0.2–0.4 ms a delivery.
 */
const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) as async_commit`;

/**
 * The endpoint's first `limit` due deliveries, oldest first. Read, not marked: the endpoint's lock keeps
 * other runs away (marking each delivery taken was a second write of its row and its five index
 * entries, PostgreSQL 0.15–0.2 ms a delivery). Prepared, as recordWindow's statement is: planned afresh
 * each time, the two cost PostgreSQL more than running them.
 */
function dueDeliveries(sql: Sql, endpointId: string, limit: number): Promise<Due[]> {
  return sql.unsafe<Due[]>(
    `select d.id::text as "deliveryId", d.message_id as "messageId", d.event_type as "eventType", d.attempts,
       to_json(d.created_at)#>>'{}' as "deliveryCreatedAt", ${CHANGE_COLUMNS}
     from webhook_deliveries d left join changes c on c.id = d.change_id
     where d.endpoint_id = $1 and d.state = 'pending' and d.next_attempt_at <= now() and (d.change_id is null or not ${HELD})
     order by d.id limit $2`,
    [endpointId, limit],
    { prepare: true },
  );
}

/** The body of a delivery: `{type, timestamp, data}`, the same on every attempt. */
function bodyOf(endpoint: Endpoint, row: Due): string {
  if (row.id === null)
    return JSON.stringify({
      type: row.eventType,
      timestamp: row.deliveryCreatedAt,
      data: {
        test: true,
        message: 'A test event, sent at the owner’s request: this endpoint receives and can verify deliveries.',
        watchlistId: endpoint.watchlistId,
        webhookId: endpoint.id,
      },
    });
  return JSON.stringify({ type: row.eventType, timestamp: row.recordedAt, data: presentChange(row as Due & { id: string }) });
}

function attempt(receivers: Receivers, endpoint: Endpoint, webhook: Webhook, row: Due): Promise<AttemptOutcome> {
  const body = bodyOf(endpoint, row);
  const now = new Date();
  return postWebhook(
    receivers,
    endpoint.url,
    {
      'User-Agent': 'Afterimage-Webhooks/1',
      'webhook-id': row.messageId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': webhook.sign(row.messageId, now, body),
    },
    body,
  );
}

/**
 * Writes a window's attempts and outcomes: delivered (2xx); else retried on the schedule while the
 * delivery is younger than a day, then failed. A 410, or failures unbroken for three days, disable the
 * endpoint and cancel what it has pending. `ended`: the endpoint is gone or disabled.
 */
async function recordWindow(
  sql: Sql,
  endpointId: string,
  rows: Due[],
  outcomes: AttemptOutcome[],
  attemptedAt: Date[],
): Promise<{ ended: boolean }> {
  const failed = outcomes.map((outcome) => outcome.error !== null);
  const anyFailed = failed.some(Boolean);
  const anySucceeded = failed.some((failure) => !failure);
  const results = JSON.stringify(
    rows.map((row, index) => ({
      id: row.deliveryId,
      attempt: row.attempts + 1,
      at: attemptedAt[index]!.toISOString(),
      duration: outcomes[index]!.durationMs,
      status: outcomes[index]!.status,
      error: outcomes[index]!.error,
      failed: failed[index],
      delay: retryDelaySeconds(row.attempts + 1),
    })),
  );
  // One statement, its own transaction. The endpoint's row first, updated (so locked): a deletion waits
  // for this window, or this window finds the endpoint gone and writes nothing. A success ends a run of
  // failures; a failure begins one (or continues it). Then every attempt logged, and each pending
  // delivery's outcome; a delivery cancelled meanwhile (the endpoint disabled by another run) keeps its
  // state, its attempt is logged. The window's ids as an array too: the planner then looks each delivery
  // up by its key instead of scanning every delivery for a function's rows it cannot count (1.9 ms a
  // window at 6,000 pending).
  const [health] = await sql.unsafe<{ failingTooLong: boolean; failingSince: string | null }[]>(
    `with health as (
       update webhook_endpoints set failing_since =
         case when $4::boolean then case when $5::boolean then now() else coalesce(failing_since, now()) end end
       where id = $1
       returning failing_since <= now() - make_interval(days => $6) as "failingTooLong", to_json(failing_since)#>>'{}' as "failingSince"),
     v as (
       select v.* from jsonb_to_recordset($2::text::jsonb)
         as v(id bigint, attempt int, at timestamptz, duration int, status int, error text, failed boolean, delay int)
       where exists (select from health)),
     logged as (
       insert into webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, http_status, error)
       select v.id, v.attempt, v.at, v.duration, v.status, v.error from v join webhook_deliveries d on d.id = v.id
       where d.id = any($3::bigint[])),
     outcome as (
       select v.id, v.attempt, now() + make_interval(secs => v.delay) as next,
         case when not v.failed then 'delivered'
              when v.status = 410 or d.created_at + make_interval(hours => $7) < now() + make_interval(secs => v.delay) then 'failed'
              else 'pending' end as state
       from v join webhook_deliveries d on d.id = v.id and d.state = 'pending' where d.id = any($3::bigint[])),
     recorded as (
       update webhook_deliveries d set attempts = o.attempt, state = o.state, next_attempt_at = o.next,
         finished_at = case when o.state <> 'pending' then now() end
       from outcome o where d.id = o.id and d.id = any($3::bigint[]) and d.state = 'pending')
     select h.* from health h cross join ${ASYNC_COMMIT}`,
    [endpointId, results, rows.map((row) => row.deliveryId), anyFailed, anySucceeded, DISABLE_AFTER_FAILING_DAYS, DELIVERY_LIFETIME_HOURS],
    { prepare: true },
  );
  if (!health) return { ended: true };
  const lastError = outcomes.filter((outcome) => outcome.error !== null).at(-1)?.error ?? null;
  const disabledReason = outcomes.some((outcome) => outcome.status === 410)
    ? 'the receiver answered 410 Gone: deliveries stopped at its request; enable the webhook to resume'
    : health.failingTooLong
      ? `every delivery failed for ${DISABLE_AFTER_FAILING_DAYS} days (since ${health.failingSince}), the last with: ${lastError}; enable the webhook once the receiver answers 2xx`
      : null;
  if (!disabledReason) return { ended: false };
  // Rare, so a statement of its own after the outcomes: should a crash come between, the next failure disables it.
  await sql`
    with disabled as (
      update webhook_endpoints set disabled_at = now(), disabled_reason = ${disabledReason} where id = ${endpointId} returning id)
    update webhook_deliveries set state = 'cancelled', finished_at = now()
    where endpoint_id = ${endpointId} and state = 'pending' and exists (select from disabled)`;
  return { ended: true };
}

/** Sends the endpoint's due deliveries, window after window, until none is due or one fails (or it is gone or disabled). */
async function sendWindows(deps: DeliveryDeps, endpoint: Endpoint): Promise<void> {
  const { sql } = deps;
  const webhook = new Webhook(deps.serverKey.open(endpoint.secretSealed));
  for (let failing = endpoint.failing; ; ) {
    const window = failing ? 1 : WINDOW;
    const rows = await dueDeliveries(sql, endpoint.id, window);
    if (rows.length === 0) return;
    const attemptedAt = rows.map(() => new Date());
    const outcomes = await Promise.all(rows.map((row) => attempt(deps.receivers, endpoint, webhook, row)));
    const result = await recordWindow(sql, endpoint.id, rows, outcomes, attemptedAt);
    for (const outcome of outcomes) webhookAttempts.inc({ outcome: outcome.error === null ? 'delivered' : 'failed' });
    failing = outcomes.some((outcome) => outcome.error !== null);
    // A failure ends the round: the endpoint is ready again when the failed delivery's retry is due.
    // A window not filled took every due delivery: asking again would find none.
    if (result.ended || failing || rows.length < window) return;
  }
}

/**
 * The endpoint's round, then its lock let go: after its outcomes are committed, so a run that takes the
 * endpoint next reads them. A round cut short by an error keeps it until the run lets go of all.
 */
async function deliverToEndpoint(deps: DeliveryDeps, endpoint: Endpoint): Promise<void> {
  await sendWindows(deps, endpoint);
  await deps.sql`select pg_advisory_unlock(${ENDPOINT_LOCK}, hashtext(${endpoint.id}))`;
}

/**
 * The shard's endpoints in the order they are ready: an endpoint's earliest due delivery, or while a
 * failed one waits for its retry, that retry (but a test event, which is not held back). Answers the
 * ready ones this run now holds (at most `limit`, with what sending to them needs; those another run
 * holds are left to it) and, when none is ready, when the first will be (undefined: nothing pending).
 */
async function readiness(sql: Sql, shard: number, limit: number): Promise<{ ready: Endpoint[]; nextAt: Date | undefined }> {
  const endpoints = await sql<(Endpoint & { readyAt: Date; ready: boolean; held: boolean | null })[]>`
    with pending as (
      select d.endpoint_id,
        least(coalesce(min(d.next_attempt_at) filter (where d.attempts > 0 and d.next_attempt_at > now()), min(d.next_attempt_at)),
              min(d.next_attempt_at) filter (where d.change_id is null)) as ready_at
      from webhook_endpoints e join webhook_deliveries d on d.endpoint_id = e.id and d.state = 'pending'
      where e.delivery_shard = ${shard} and e.disabled_at is null
      group by d.endpoint_id
      order by ready_at limit ${limit})
    select e.id::text, e.watchlist_id::text as "watchlistId", e.url, e.secret_sealed as "secretSealed",
      e.failing_since is not null as failing, p.ready_at as "readyAt", p.ready_at <= now() as ready,
      case when p.ready_at <= now() then pg_try_advisory_lock(${ENDPOINT_LOCK}, hashtext(e.id::text)) end as held
    from pending p join webhook_endpoints e on e.id = p.endpoint_id
    order by p.ready_at`;
  const ready = endpoints.filter((endpoint) => endpoint.ready);
  return { ready: ready.filter((endpoint) => endpoint.held), nextAt: ready.length ? undefined : endpoints[0]?.readyAt };
}

/**
 * Sends to the shard's ready endpoints, ENDPOINTS_AT_ONCE at a time, until none is ready; then queues the
 * shard's job for when one will be (a run that finds the ready ones all taken leaves that to theirs).
 */
async function sendWhileReady(deps: DeliveryDeps, shard: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const { ready, nextAt } = await readiness(deps.sql, shard, READY_LIST);
    if (ready.length === 0) {
      if (nextAt) await scheduleShard(deps.sql, shard, nextAt);
      return;
    }
    let next = 0;
    const rounds = await Promise.allSettled(
      Array.from({ length: Math.min(ENDPOINTS_AT_ONCE, ready.length) }, async () => {
        while (next < ready.length) await deliverToEndpoint(deps, ready[next++]!);
      }),
    );
    // One endpoint's failure (the database's, not a receiver's) fails the job once the others' rounds have ended.
    const failed = rounds.find((round) => round.status === 'rejected');
    if (failed) throw failed.reason;
    if (Date.now() - started > RUN_BUDGET_MS) return scheduleShard(deps.sql, shard);
  }
}

/**
 * Sends the shard's due deliveries. One connection for the whole run: it holds the endpoints' session
 * locks, and the run's statements share it (pipelined), so a run never waits for a second connection of
 * the pool while it holds one.
 */
export async function deliverWebhooks(deps: DeliveryDeps, shard: number): Promise<void> {
  const connection = await deps.sql.reserve();
  try {
    await sendWhileReady({ ...deps, sql: connection }, shard);
  } finally {
    // What the run still holds (a round cut short by an error) is let go before the connection returns to the pool.
    try {
      await connection`select pg_advisory_unlock_all()`;
    } finally {
      connection.release();
    }
  }
}
