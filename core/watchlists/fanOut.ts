/**
 * The fan-out of the change log (sql/045_watchlists.sql): each change queued in change_fanout_queue
 * becomes an event on the stream of every watchlist that watches it, and a webhook delivery (with its
 * job) for each of those watchlists' enabled endpoints, all in the transaction that takes it from the
 * queue, so a change is fanned out exactly once or, after a failure, again from the start.
 */
import type { Queryable, Sql } from '../db/database.ts';
import { appendToStreams } from '../events/events.ts';
import { changesById, type Change } from './change.ts';
import { changeEvent, watchlistStream } from './watchlistEvents.ts';

/** Changes taken from the queue in one transaction. */
const FANOUT_BATCH = 200;

/**
 * Which watchlists watch which of these changes: a channel item its channel's changes, a video item
 * its video's, a query item its saved query's new matches, each only from the moment it was added. A
 * saved query's new match is news to that query's watchers only, not to every watcher of the channel.
 */
async function watchersOf(tx: Queryable, changeIds: readonly string[]): Promise<{ watchlistId: string; changeId: string }[]> {
  // One indexed join per kind of item (watchlist_items_channel, _video, _query); union drops a change watched twice.
  const watching = (column: string, kinds: string) =>
    `select i.watchlist_id::text as "watchlistId", c.id::text as "changeId"
     from changes c join watchlist_items i on i.${column} = c.${column} and i.created_at <= c.recorded_at
     where c.id = any($1::bigint[]) and ${kinds}`;
  return tx.unsafe(
    [
      watching('channel_id', "c.kind <> 'query.new_match'"),
      watching('video_id', "c.kind <> 'query.new_match'"),
      watching('saved_query_id', "c.kind = 'query.new_match'"),
    ].join('\nunion\n'),
    [changeIds as string[]],
  );
}

/**
 * A webhook delivery per enabled endpoint of each watchlist and change, and the deliver_webhooks job
 * of each shard of those endpoints, to run now (an endpoint whose failed delivery waits for its retry
 * keeps its new ones waiting behind it: core/webhooks/deliverWebhooks.ts). The message id is the
 * webhook-id header receivers drop repeats by: 128 random bits, base64url.
 */
async function queueDeliveries(tx: Queryable, watchers: readonly { watchlistId: string; changeId: string }[]): Promise<number> {
  const [queued] = await tx.unsafe<{ deliveries: number }[]>(
    `with watched as (
       select * from unnest($1::uuid[], $2::bigint[]) as w(watchlist_id, change_id)),
     delivered as (
       insert into webhook_deliveries (endpoint_id, change_id, message_id, event_type)
       select e.id, w.change_id, 'msg_' || translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/=', '-_'), c.kind
       from watched w
       join webhook_endpoints e on e.watchlist_id = w.watchlist_id and e.disabled_at is null
       join changes c on c.id = w.change_id
       order by w.change_id, e.id
       on conflict do nothing
       returning endpoint_id),
     jobs as (
       select graphile_worker.add_job('deliver_webhooks', json_build_object('shard', shard), job_key := 'deliver_webhooks:' || shard)
       from (select distinct delivery_shard as shard from webhook_endpoints where id in (select endpoint_id from delivered)) shards
       -- Job rows taken in one order (volatile calls run after the sort): as few ways to deadlock as can be.
       order by shard)
     select (select count(*) from delivered)::int as deliveries, (select count(*) from jobs)::int as jobs`,
    [watchers.map((w) => w.watchlistId), watchers.map((w) => w.changeId)],
  );
  return queued?.deliveries ?? 0;
}

/** The events of one batch: each watchlist's changes oldest first, a change's one event shared by its watchlists. */
function eventsOf(watchers: readonly { watchlistId: string; changeId: string }[], changes: ReadonlyMap<string, Change>) {
  const events = new Map([...changes].map(([id, change]) => [id, changeEvent(change)]));
  return [...watchers]
    .sort((a, b) => Number(a.changeId) - Number(b.changeId))
    .flatMap(({ watchlistId, changeId }) => {
      const event = events.get(changeId);
      return event ? [{ stream: watchlistStream(watchlistId), event }] : [];
    });
}

/** Fans out one batch of the queue, oldest change first; undefined when the queue is empty (or held by another job). */
async function fanOutBatch(sql: Sql): Promise<{ changes: number; events: number; deliveries: number } | undefined> {
  return sql.begin(async (tx) => {
    const taken = await tx<{ changeId: string }[]>`
      delete from change_fanout_queue where change_id in (
        select change_id from change_fanout_queue order by change_id limit ${FANOUT_BATCH} for update skip locked)
      returning change_id::text as "changeId"`;
    if (taken.length === 0) return undefined;
    const ids = taken.map((row) => row.changeId);
    const watchers = await watchersOf(tx, ids);
    const changes = new Map((await changesById(tx, [...new Set(watchers.map((w) => w.changeId))])).map((c) => [c.id, c]));
    // Every watchlist's events of the batch in one statement: thousands of streams cost one round trip.
    await appendToStreams(tx, eventsOf(watchers, changes));
    const deliveries = watchers.length ? await queueDeliveries(tx, watchers) : 0;
    return { changes: ids.length, events: watchers.length, deliveries };
  });
}

/** Fans out the queue until it is empty; answers what it did, for the task's log. */
export async function fanOutChanges(sql: Sql): Promise<{ changes: number; events: number; deliveries: number }> {
  const done = { changes: 0, events: 0, deliveries: 0 };
  for (;;) {
    const batch = await fanOutBatch(sql);
    if (!batch) return done;
    done.changes += batch.changes;
    done.events += batch.events;
    done.deliveries += batch.deliveries;
  }
}
