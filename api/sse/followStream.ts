/** What the generation streams (summaries, stenograms) share: resuming, following a stream of the event log to its final event, answering one final event. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../core/errors.ts';
import type { TypedEvent } from '../../core/events/defineEvent.ts';
import type { Queryable } from '../../core/db/database.ts';
import { parseEventId, positionOf, streamStart, type Position, type StoredEvent } from '../../core/events/events.ts';
import type { Logger } from '../../core/log.ts';
import type { EventHub } from './hub.ts';
import { eventFrame, openEventStream } from './writer.ts';

/** What a stream needs of the API's dependencies. */
interface StreamDeps { sql: Queryable; hub: EventHub; log: Logger; openStreams: Set<{ end(): void }>; config: { SSE_HEARTBEAT_SECONDS: number } }

/** The id a reconnecting client sends: the Last-Event-ID header, else `?lastEventId=` (for clients that cannot set headers). */
export function lastEventId(req: IncomingMessage, queryValue: string | undefined): string | undefined {
  const header = req.headers['last-event-id'];
  return (typeof header === 'string' && header) || queryValue || undefined;
}

/** A Last-Event-ID that is malformed, out of range, or names no event of the stream: resuming from it would skip or repeat events. */
export const notOfThisStream = (given: string) =>
  new AppError('INVALID_INPUT', `Last-Event-ID: "${given}" is not an event id of this stream; reconnect without it to receive the whole stream`);

/**
 * Where to resume `stream`: after the event the client names, from the start when it names none. An
 * id that is no event of `stream` (another stream's, or a generation since replaced) is refused.
 */
export async function resumePosition(sql: Queryable, stream: string, given: string | undefined): Promise<Position> {
  if (!given) return streamStart;
  const eventId = parseEventId(given);
  const position = eventId === undefined ? undefined : await positionOf(sql, stream, eventId);
  if (position === undefined) throw notOfThisStream(given);
  return position;
}

/** The payload a final event is sent with (e.g. with what the log does not keep); undefined: the stream ends without it, and the client's reconnect reads the result. */
export type PresentFinal = (event: StoredEvent) => Promise<unknown>;

/**
 * Streams the events of `stream` after `from` as they commit, each with its id, and ends
 * after the final one. A client that leaves stops only its own subscription.
 */
export function followStream(deps: StreamDeps, res: ServerResponse, stream: string, from: Position, isFinal: (type: string) => boolean, presentFinal?: PresentFinal): void {
  let unsubscribe = () => {};
  const sse = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => unsubscribe());
  const sendFinal = async (event: StoredEvent) => {
    const payload = presentFinal ? await presentFinal(event).catch((error: unknown) => deps.log.warn('final event not sent; the client reconnects for it', { stream, err: error })) : event.payload;
    if (payload !== undefined) sse.write(eventFrame(event.type, payload, event.id));
    sse.end();
  };
  unsubscribe = deps.hub.subscribe(stream, from, (events) => {
    for (const event of events) {
      if (isFinal(event.type)) {
        unsubscribe();
        return void sendFinal(event);
      }
      sse.write(eventFrame(event.type, event.payload, event.id));
    }
  }, sse.drained);
  if (!sse.open) unsubscribe();
}

/** A finished generation's stream: its final event, from what is stored (its logged events may be cleaned up by now). */
export function answerFinalEvent(deps: StreamDeps, res: ServerResponse, event: TypedEvent): void {
  const sse = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => {});
  sse.write(eventFrame(event.type, event.payload));
  sse.end();
}
