import type { Sql } from '../../core/db/database.ts';
import { comparePositions, finalHead, readEvents, type Position, type StoredEvent } from '../../core/events/events.ts';
import type { Logger } from '../../core/log.ts';

/** Subscribers that are caught up get the very same array, so what they make of it can be made once (see api/routes/search.ts). */
type Deliver = (events: readonly StoredEvent[]) => void;

interface Feed {
  stream: string;
  cursor: Position;
  /** Settles once the cursor is placed; until then nothing is delivered. */
  placed: Promise<void>;
  subscribers: Set<Deliver>;
  polling: boolean;
  again: boolean;
}

export interface EventHub {
  /**
   * Delivers every event of `stream` after `from`, in order, none twice, then live ones as they
   * commit. The catch-up to the live events waits for `readyForMore` between its pages, so a
   * subscriber far behind is fed at its own pace. Returns the function that ends the subscription.
   */
  subscribe(stream: string, from: Position, deliver: Deliver, readyForMore?: () => Promise<void>): () => void;
  close(): Promise<void>;
}

const RECHECK_MS = 25;
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

/**
 * One LISTEN connection per API process. Streams with listeners share a feed: one query per
 * notification however many clients follow the stream; each subscriber catches up privately first.
 */
export async function createEventHub(sql: Sql, log: Logger): Promise<EventHub> {
  const feeds = new Map<string, Feed>();
  let closed = false;

  const poll = async (feed: Feed): Promise<void> => {
    if (feed.polling) {
      feed.again = true;
      return;
    }
    feed.polling = true;
    try {
      await feed.placed;
      for (;;) {
        feed.again = false;
        const { events, heldBack } = await readEvents(sql, feed.stream, feed.cursor, PAGE_SIZE);
        if (events.length) {
          // Who joins from here on catches up to the new cursor privately, so the list is taken now.
          feed.cursor = events[events.length - 1]!;
          await deliverInSlices([...feed.subscribers], events);
        }
        if (closed || feed.subscribers.size === 0) break;
        if (heldBack) {
          // Committed events wait behind an older open transaction, or there are more pages: look again.
          if (!events.length) await new Promise((done) => setTimeout(done, RECHECK_MS));
          continue;
        }
        if (!feed.again) break;
      }
    } catch (error) {
      log.warn('event feed poll failed; retrying', { stream: feed.stream, err: error });
      setTimeout(() => void poll(feed), 1_000).unref();
    } finally {
      feed.polling = false;
    }
  };

  const listener = await sql.listen(
    'afterimage_events',
    (stream) => {
      const feed = feeds.get(stream);
      if (feed) void poll(feed);
    },
    // Also after a reconnect: notifications sent while the connection was down are lost, so look.
    () => feeds.forEach((feed) => void poll(feed)),
  );

  return {
    subscribe(stream, from, deliver, readyForMore) {
      let feed = feeds.get(stream);
      if (!feed) {
        // The feed starts at the stream's head, so whoever is behind catches up privately, at their own pace.
        const created: Feed = { stream, cursor: from, placed: Promise.resolve(), subscribers: new Set(), polling: false, again: false };
        created.placed = finalHead(sql, stream)
          .then((head) => {
            if (head && comparePositions(head, from) > 0) created.cursor = head;
          })
          .catch((error) => log.warn('event feed start failed; it starts where its first subscriber is', { stream, err: error }));
        feed = created;
        feeds.set(stream, feed);
      }
      const shared = feed;
      let last = from;
      let active = true;
      let caughtUp = false;
      const subscriber: Deliver = (events) => {
        if (!active || !caughtUp || events.length === 0) return;
        // Past the catch-up every event is new: the shared array passes on as it is.
        const fresh = comparePositions(events[0]!, last) > 0 ? events : events.filter((event) => comparePositions(event, last) > 0);
        if (fresh.length === 0) return;
        last = fresh[fresh.length - 1]!;
        deliver(fresh);
      };
      shared.subscribers.add(subscriber);

      // Read privately until level with the feed's cursor, then take its deliveries: a delivery under
      // way is either covered by what was read or arrives after the switch, and repeats are dropped.
      const catchUp = async (): Promise<void> => {
        try {
          await shared.placed;
          while (active && comparePositions(last, shared.cursor) < 0) {
            const { events } = await readEvents(sql, stream, last, PAGE_SIZE);
            const upTo = events.filter((event) => comparePositions(event, shared.cursor) <= 0);
            if (upTo.length === 0) break;
            last = upTo[upTo.length - 1]!;
            if (active) deliver(upTo);
            await readyForMore?.();
          }
          caughtUp = true;
          void poll(shared);
        } catch (error) {
          log.warn('event replay failed; retrying', { stream, err: error });
          if (active) setTimeout(() => void catchUp(), 1_000).unref();
        }
      };
      void catchUp();

      return () => {
        active = false;
        shared.subscribers.delete(subscriber);
        if (shared.subscribers.size === 0 && feeds.get(stream) === shared) feeds.delete(stream);
      };
    },
    async close() {
      closed = true;
      feeds.clear();
      await listener.unlisten();
    },
  };
}
