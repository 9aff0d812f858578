import type { Sql } from '../../core/db/database.ts';
import { readEvents, streamHead, type Position, type StoredEvent, PROGRESS_CHANNEL, type ProgressNote } from '../../core/events/events.ts';
import type { Logger } from '../../core/log.ts';

/** Subscribers that are caught up get the very same array, so what they make of it can be made once (see api/routes/search.ts). */
type Deliver = (events: readonly StoredEvent[]) => void;
/** The latest progress of a stream, as its job announced it (kept on its row, not in the log). */
type ProgressListener = (note: ProgressNote) => void;

interface Feed {
  stream: string;
  cursor: Position;
  /** Settles once the cursor is placed; until then nothing is delivered. */
  placed: Promise<void>;
  subscribers: Set<Deliver>;
  progressListeners: Set<ProgressListener>;
  /** Announced progress, handed on once the events committed before it are delivered. */
  pendingProgress: ProgressNote | undefined;
  polling: boolean;
  again: boolean;
}

export interface EventHub {
  /**
   * Delivers every event of `stream` after `from`, in order, none twice, then live ones as they
   * commit. The catch-up to the live events waits for `readyForMore` between its pages, so a
   * subscriber far behind is fed at its own pace. `progress` receives the progress the stream's job
   * announces (after the events committed before it), once caught up. Returns the function that ends the subscription.
   */
  subscribe(stream: string, from: Position, deliver: Deliver, readyForMore?: () => Promise<void>, progress?: ProgressListener): () => void;
  close(): Promise<void>;
}

/** Events read at a time: a process that falls behind holds one page's frames, not the whole backlog. */
const PAGE_SIZE = 200;
/** Subscribers served in one turn of the event loop; between turns, sockets flush and other work gets in. */
const SLICE = 100;

/** Hands `events` to every subscriber, a slice per turn of the event loop. */
async function deliverInSlices(subscribers: Deliver[], events: readonly StoredEvent[]): Promise<void> {
  for (let start = 0; start < subscribers.length; start += SLICE) {
    if (start > 0) await new Promise((turn) => setImmediate(turn));
    for (const deliver of subscribers.slice(start, start + SLICE)) deliver(events);
  }
}

/** What the functions below share: the feeds by stream, and whether the hub is closed. */
interface Hub {
  sql: Sql;
  log: Logger;
  feeds: Map<string, Feed>;
  closed: boolean;
}

/**
 * One LISTEN connection per API process. Streams with listeners share a feed: one query per
 * notification however many clients follow the stream; each subscriber catches up privately first.
 */
export async function createEventHub(sql: Sql, log: Logger): Promise<EventHub> {
  const hub: Hub = { sql, log, feeds: new Map(), closed: false };
  const listener = await sql.listen(
    'afterimage_events',
    (stream) => {
      const feed = hub.feeds.get(stream);
      if (feed) void poll(hub, feed);
    },
    // Also after a reconnect: notifications sent while the connection was down are lost, so look.
    () => hub.feeds.forEach((feed) => void poll(hub, feed)),
  );
  const progressListener = await sql.listen(PROGRESS_CHANNEL, (note) => {
    const split = note.indexOf('\n');
    const feed = hub.feeds.get(note.slice(0, split));
    if (!feed || feed.progressListeners.size === 0) return;
    feed.pendingProgress = JSON.parse(note.slice(split + 1)) as ProgressNote;
    void poll(hub, feed);
  });
  return {
    subscribe: (stream, from, deliver, readyForMore, progress) => subscribe(hub, stream, from, deliver, readyForMore, progress),
    async close() {
      hub.closed = true;
      hub.feeds.clear();
      await Promise.all([listener.unlisten(), progressListener.unlisten()]);
    },
  };
}

/** Reads the feed's new events, a page at a time, and hands each page to its subscribers; one poll per feed at a time. */
async function poll(hub: Hub, feed: Feed): Promise<void> {
  if (feed.polling) {
    feed.again = true;
    return;
  }
  feed.polling = true;
  try {
    await feed.placed;
    for (;;) {
      feed.again = false;
      const { events, more } = await readEvents(hub.sql, feed.stream, feed.cursor, PAGE_SIZE);
      if (events.length) {
        // Who joins from here on catches up to the new cursor privately, so the list is taken now.
        feed.cursor = events[events.length - 1]!.seq;
        await deliverInSlices([...feed.subscribers], events);
      }
      const progress = feed.pendingProgress;
      feed.pendingProgress = undefined;
      if (progress) feed.progressListeners.forEach((listener) => listener(progress));
      if (hub.closed || feed.subscribers.size === 0) break;
      if (!more && !feed.again) break;
    }
  } catch (error) {
    hub.log.warn('event feed poll failed; retrying', { stream: feed.stream, err: error });
    setTimeout(() => void poll(hub, feed), 1_000).unref();
  } finally {
    feed.polling = false;
  }
}

/** A new feed for `stream`, registered in the hub. */
function openFeed(hub: Hub, stream: string, from: Position): Feed {
  // The feed starts at the stream's head, so whoever is behind catches up privately, at their own pace.
  const feed: Feed = {
    stream,
    cursor: from,
    placed: Promise.resolve(),
    subscribers: new Set(),
    progressListeners: new Set(),
    pendingProgress: undefined,
    polling: false,
    again: false,
  };
  feed.placed = streamHead(hub.sql, stream)
    .then((head) => {
      if (head > from) feed.cursor = head;
    })
    .catch((error) => hub.log.warn('event feed start failed; it starts where its first subscriber is', { stream, err: error }));
  hub.feeds.set(stream, feed);
  return feed;
}

/** One subscriber's place: the last event it was given, whether it still listens, whether it is level with its feed. */
interface Subscription {
  feed: Feed;
  deliver: Deliver;
  last: Position;
  active: boolean;
  caughtUp: boolean;
}

function subscribe(
  hub: Hub,
  stream: string,
  from: Position,
  deliver: Deliver,
  readyForMore?: () => Promise<void>,
  progress?: ProgressListener,
): () => void {
  const feed = hub.feeds.get(stream) ?? openFeed(hub, stream, from);
  const subscription: Subscription = { feed, deliver, last: from, active: true, caughtUp: false };
  const fromFeed = feedDeliveries(subscription);
  const progressOf: ProgressListener = (note) => subscription.active && subscription.caughtUp && progress?.(note);
  feed.subscribers.add(fromFeed);
  if (progress) feed.progressListeners.add(progressOf);
  void catchUp(hub, subscription, readyForMore);
  return () => {
    subscription.active = false;
    feed.subscribers.delete(fromFeed);
    feed.progressListeners.delete(progressOf);
    if (feed.subscribers.size === 0 && hub.feeds.get(stream) === feed) hub.feeds.delete(stream);
  };
}

/** What the feed's deliveries become for one subscriber: nothing until it has caught up, then only what is new to it. */
function feedDeliveries(subscription: Subscription): Deliver {
  return (events) => {
    if (!subscription.active || !subscription.caughtUp || events.length === 0) return;
    // Past the catch-up every event is new: the shared array passes on as it is.
    const fresh = events[0]!.seq > subscription.last ? events : events.filter((event) => event.seq > subscription.last);
    if (fresh.length === 0) return;
    subscription.last = fresh[fresh.length - 1]!.seq;
    subscription.deliver(fresh);
  };
}

/**
 * Reads privately until level with the feed's cursor, then takes its deliveries: a delivery under
 * way is either covered by what was read or arrives after the switch, and repeats are dropped.
 * Waits for `readyForMore` between pages, so a subscriber far behind is fed at its own pace.
 */
async function catchUp(hub: Hub, subscription: Subscription, readyForMore?: () => Promise<void>): Promise<void> {
  const { feed } = subscription;
  try {
    await feed.placed;
    while (subscription.active && subscription.last < feed.cursor) {
      const { events } = await readEvents(hub.sql, feed.stream, subscription.last, PAGE_SIZE);
      const upTo = events.filter((event) => event.seq <= feed.cursor);
      if (upTo.length === 0) break;
      subscription.last = upTo[upTo.length - 1]!.seq;
      if (subscription.active) subscription.deliver(upTo);
      await readyForMore?.();
    }
    subscription.caughtUp = true;
    void poll(hub, feed);
  } catch (error) {
    hub.log.warn('event replay failed; retrying', { stream: feed.stream, err: error });
    if (subscription.active) setTimeout(() => void catchUp(hub, subscription, readyForMore), 1_000).unref();
  }
}
