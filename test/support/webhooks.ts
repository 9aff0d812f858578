/**
 * Watchlists, changes and deliveries made the way the fan-out makes them (WATCH.md's contract: a
 * webhook_deliveries row per enabled endpoint and its shard's deliver_webhooks job),
 * so the webhook tests need neither the watchlist CRUD nor the fan-out.
 */
import type { Queryable, Sql } from '../../core/db/database.ts';
import { DELIVERY_SHARDS, scheduleEndpoint, scheduleShard } from '../../core/webhooks/deliveryJob.ts';
import { channelIdFor, videoIdFor, addVideos } from './subtitles.ts';

export async function createWatchlist(sql: Sql, ownerId: string, name = 'Watched'): Promise<string> {
  const [row] = await sql<{ id: string }[]>`insert into watchlists (owner_id, name) values (${ownerId}, ${name}) returning id::text`;
  return row!.id;
}

let changes = 0;

/** Logs a confirmed deletion of a fresh video: the change's id. */
export async function logDeletion(sql: Sql): Promise<string> {
  const label = `webhook-${++changes}-${Date.now()}`;
  const videoId = videoIdFor(label);
  const channelId = channelIdFor('webhooks');
  await addVideos(sql, channelId, [{ videoId, title: `Gone ${label}` }], 'Webhook Channel');
  const [row] = await sql<{ id: string }[]>`
    insert into changes (kind, video_id, channel_id, happened_at, details)
    values ('video.deleted', ${videoId}, ${channelId}, now(), ${sql.json({
      title: `Gone ${label}`,
      status: 'deleted',
      previousStatus: 'live',
      reason: 'terms',
      claimant: null,
      source: 'youtube_web',
      evidence: 'This video has been removed for violating the Terms of Service.',
    })})
    returning id::text`;
  return row!.id;
}

/** What the fan-out does for a change and a watchlist: a delivery per enabled endpoint, and the job of each endpoint's shard. */
export async function queueDeliveries(sql: Queryable, changeId: string, watchlistId: string): Promise<void> {
  await sql`
    with added as (
      insert into webhook_deliveries (endpoint_id, change_id, message_id, event_type)
      select e.id, c.id, 'msg_' || replace(gen_random_uuid()::text, '-', ''), c.kind
      from webhook_endpoints e, changes c
      where e.watchlist_id = ${watchlistId} and e.disabled_at is null and c.id = ${changeId}
      on conflict do nothing
      returning endpoint_id)
    select graphile_worker.add_job('deliver_webhooks', json_build_object('shard', shard), job_key => 'deliver_webhooks:' || shard)
    from (select distinct delivery_shard as shard from webhook_endpoints where id in (select endpoint_id from added)) shards`;
}

/** Makes the endpoint's pending deliveries due now and its shard's job run now, as the passing of their wait would. */
export async function makeDue(sql: Sql, endpointId: string): Promise<void> {
  await sql`update webhook_deliveries set next_attempt_at = now() where endpoint_id = ${endpointId} and state = 'pending'`;
  await scheduleEndpoint(sql, endpointId);
}

export interface DeliveryRow {
  id: string;
  messageId: string;
  changeId: string | null;
  state: string;
  attempts: number;
  nextAttemptAt: Date;
  createdAt: Date;
}

export const deliveriesOf = (sql: Sql, endpointId: string) =>
  sql<DeliveryRow[]>`
    select id::text, message_id as "messageId", change_id::text as "changeId", state, attempts,
      next_attempt_at as "nextAttemptAt", created_at as "createdAt"
    from webhook_deliveries where endpoint_id = ${endpointId} order by id`;

/** The run_at of the waiting job of the endpoint's shard, if one waits. */
export async function waitingJobAt(sql: Sql, endpointId: string): Promise<Date | undefined> {
  const [job] = await sql<{ runAt: Date }[]>`
    select run_at as "runAt" from graphile_worker.jobs
    where key = (select 'deliver_webhooks:' || delivery_shard from webhook_endpoints where id = ${endpointId}) and locked_at is null`;
  return job?.runAt;
}

/** Runs every shard's job now and waits until each has run (none due or running): whatever was ready has been sent. */
export async function runAllShards(sql: Sql): Promise<void> {
  const queued = new Date();
  for (let shard = 0; shard < DELIVERY_SHARDS; shard++) await scheduleShard(sql, shard);
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((done) => setTimeout(done, 100))) {
    const [busy] = await sql`
      select 1 from graphile_worker.jobs
      where task_identifier = 'deliver_webhooks' and (locked_at is not null or run_at <= ${queued})`;
    if (!busy) return;
  }
  throw new Error('the delivery jobs did not all run within 20 s');
}
