/** What the generation streams (summaries, stenograms) share: resuming, following a stream of the event log to its final event, answering one final event. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../core/errors.ts';
import type { TypedEvent } from '../../core/events/defineEvent.ts';
import type { Queryable } from '../../core/db/database.ts';
import { formatPosition, hasEventAt, parsePosition, type Position } from '../../core/events/events.ts';
import type { EventHub } from './hub.ts';
import { eventFrame, openEventStream } from './writer.ts';

/** What a stream needs of the API's dependencies. */
interface StreamDeps { sql: Queryable; hub: EventHub; openStreams: Set<{ end(): void }>; config: { SSE_HEARTBEAT_SECONDS: number } }

/** The id a reconnecting client sends: the Last-Event-ID header, else `?lastEventId=` (for clients that cannot set headers). */
export function lastEventId(req: IncomingMessage, queryValue: string | undefined): string | undefined {
  const header = req.headers['last-event-id'];
  return (typeof header === 'string' && header) || queryValue || undefined;
}

/** A Last-Event-ID that is malformed, out of range, or names no event of the stream: resuming from it would skip or repeat events. */
export const notOfThisStream = (given: string) =>
  new AppError('INVALID_INPUT', `Last-Event-ID: "${given}" is not an event id of this stream; reconnect without it to receive the whole stream`);

/** Before the first event: a stream followed from its start. */
export const streamStart: Position = { xid: '0', id: '0' };

/** Where to resume a stream whose event ids are positions in the event log (from the start when none is given). */
export function resumePosition(req: IncomingMessage, queryValue: string | undefined): Position {
  const given = lastEventId(req, queryValue);
  if (!given) return streamStart;
  const position = parsePosition(given);
  if (!position) throw notOfThisStream(given);
  return position;
}

/**
 * Streams the events of `stream` after `from` as they commit, each with its position as id, and
 * ends after the final one. A client that leaves stops only its own subscription. A position that
 * is no event of `stream` (another stream's, or a generation since replaced) is refused before the
 * stream opens.
 */
export async function followStream(deps: StreamDeps, res: ServerResponse, stream: string, from: Position, isFinal: (type: string) => boolean): Promise<void> {
  if (formatPosition(from) !== formatPosition(streamStart) && !(await hasEventAt(deps.sql, stream, from))) throw notOfThisStream(formatPosition(from));
  let unsubscribe = () => {};
  const sse = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => unsubscribe());
  unsubscribe = deps.hub.subscribe(stream, from, (events) => {
    for (const event of events) {
      sse.write(eventFrame(event.type, event.payload, `${event.xid}.${event.id}`));
      if (isFinal(event.type)) return sse.end();
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
