import type { Sql } from '../../core/db/database.ts';
import { comparePositions, readEvents, type Position, type StoredEvent } from '../../core/events/events.ts';
import type { Logger } from '../../core/log.ts';

type Deliver = (events: StoredEvent[]) => void;

interface Feed {
  stream: string;
  cursor: Position;
  subscribers: Set<Deliver>;
  polling: boolean;
  again: boolean;
}

export interface EventHub {
  /**
   * Delivers every event of `stream` after `from`, in order, none twice, then live ones as they
   * commit. Returns the function that ends the subscription.
   */
  subscribe(stream: string, from: Position, deliver: Deliver): () => void;
  close(): Promise<void>;
}

const RECHECK_MS = 25;

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
      for (;;) {
        feed.again = false;
        const { events, heldBack } = await readEvents(sql, feed.stream, feed.cursor);
        if (events.length) {
          feed.cursor = events[events.length - 1]!;
          for (const deliver of feed.subscribers) deliver(events);
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
    subscribe(stream, from, deliver) {
      let feed = feeds.get(stream);
      if (!feed) {
        feed = { stream, cursor: from, subscribers: new Set(), polling: false, again: false };
        feeds.set(stream, feed);
      }
      const shared = feed;
      const caughtUpTo = shared.cursor;
      let last = from;
      let buffered: StoredEvent[] | undefined = [];
      const send = (events: StoredEvent[]) => {
        const fresh = events.filter((event) => comparePositions(event, last) > 0);
        if (fresh.length === 0) return;
        last = fresh[fresh.length - 1]!;
        deliver(fresh);
      };
      const subscriber: Deliver = (events) => (buffered ? buffered.push(...events) : send(events));
      shared.subscribers.add(subscriber);
      let active = true;

      // Catch up from `from` to where the shared feed stood when we joined it, then take its deliveries.
      void (async () => {
        try {
          while (active && comparePositions(last, caughtUpTo) < 0) {
            const { events } = await readEvents(sql, stream, last);
            const upTo = events.filter((event) => comparePositions(event, caughtUpTo) <= 0);
            if (upTo.length === 0) break;
            send(upTo);
          }
        } finally {
          const pending = buffered ?? [];
          buffered = undefined;
          if (active) send(pending);
          void poll(shared);
        }
      })().catch((error) => log.warn('event replay failed', { stream, err: error }));

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
