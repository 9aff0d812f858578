/**
 * What the generation streams (summaries, stenograms, any kind of core/generations) share: resuming,
 * following a generation to its final event (its current progress first), answering a finished one,
 * and 204 No Content once a client has everything (the HTML standard's way to stop EventSource).
 */
import type { ServerResponse } from 'node:http';
import type { TypedEvent } from '../../core/events/defineEvent.ts';
import type { Queryable } from '../../core/db/database.ts';
import {
  lastEvent,
  parseEventId,
  positionOf,
  readEvents,
  streamStart,
  type Position,
  type StoredEvent,
  type ProgressNote,
} from '../../core/events/events.ts';
import type { GenerationKind, GenerationRow } from '../../core/generations/generationKind.ts';
import { generationStream, isFinalOf } from '../../core/generations/lifecycle.ts';
import type { Logger } from '../../core/log.ts';
import type { EventHub } from './hub.ts';
import { answerNothingMore, eventFrame, notOfThisStream, openEventStream } from './writer.ts';

/** What a stream needs of the API's dependencies. */
interface StreamDeps {
  sql: Queryable;
  hub: EventHub;
  log: Logger;
  openStreams: Set<{ end(): void }>;
  config: { SSE_HEARTBEAT_SECONDS: number };
}

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
type PresentFinal = (event: StoredEvent | TypedEvent) => Promise<unknown>;

/**
 * The id a finished generation's final event is sent with when its logged events are gone (cleanup
 * keeps a week): no event has it (ids start at 1), so a reconnect with it is known to have the outcome.
 */
const OUTCOME_FROM_ROW = '0';

/** How a kind's stream answers a row the caller may follow. */
export interface GenerationStreamParts<Row extends GenerationRow> {
  kind: GenerationKind<Row, never>;
  /** The final event of a finished row, from what is stored. */
  outcome(row: Row): Promise<TypedEvent>;
  presentFinal?: (row: Row) => PresentFinal;
}

/**
 * A generation's stream for a client that names `given` (Last-Event-ID) or nothing. Generating: the
 * events after `given`, the current progress, then live ones to the final event. Finished: the final
 * event with its id, once, to a first connection or to one that missed it; a reconnect after it gets
 * 204 (nothing more will ever come). Every event is sent with its id.
 */
export async function answerGenerationStream<Row extends GenerationRow>(
  deps: StreamDeps,
  res: ServerResponse,
  parts: GenerationStreamParts<Row>,
  row: Row,
  given: string | undefined,
): Promise<void> {
  const stream = generationStream(parts.kind, row.id);
  if (row.status === 'generating') return followGeneration(deps, res, parts, row, await resumePosition(deps.sql, stream, given));
  const final = await lastEvent(deps.sql, stream);
  const finalId = final && isFinalOf(parts.kind)(final.type) ? final.id : OUTCOME_FROM_ROW;
  if (given === finalId || given === OUTCOME_FROM_ROW) return answerNothingMore(res);
  await resumePosition(deps.sql, stream, given);
  // Made before the stream opens, so that a failure to make it (a store unreachable) is still an error envelope.
  const event = await parts.outcome(row);
  const sse = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => {});
  sse.write(eventFrame(event.type, event.payload, finalId));
  sse.end();
}

/**
 * Follows a generating row: the logged events after `from` (its milestones: few), then its current
 * progress, then live events and progress as they commit, ending after the final event. A client that
 * leaves stops only its own subscription.
 */
export async function followGeneration<Row extends GenerationRow>(
  deps: StreamDeps,
  res: ServerResponse,
  parts: GenerationStreamParts<Row>,
  row: Row,
  from: Position,
): Promise<void> {
  const stream = generationStream(parts.kind, row.id);
  const { events: missed } = await readEvents(deps.sql, stream, from, 1_000);
  let lastId: string | undefined;
  let shown: { stage?: unknown; percent?: unknown } = {};
  // Progress between milestones: only ahead of what the client was shown, within the stage it was told of.
  const sendProgress = (note: ProgressNote) => {
    const next = note.payload as { stage?: unknown; percent: number };
    if (lastId === undefined || next.stage !== shown.stage || next.percent <= Number(shown.percent ?? -1)) return;
    sse.write(eventFrame(note.type, note.payload, lastId));
    shown = next;
  };
  const present = parts.presentFinal?.(row);
  const follower = generationFollower(deps.hub, parts.kind, row.id, {
    event(event) {
      sse.write(eventFrame(event.type, event.payload, event.id));
      lastId = event.id;
      if (event.type === parts.kind.events.progress.type) shown = event.payload as typeof shown;
    },
    async final(event) {
      const payload = present
        ? await present(event).catch((error: unknown) =>
            deps.log.warn('final event not sent; the client reconnects for it', { stream, err: error }),
          )
        : event.payload;
      if (payload !== undefined) sse.write(eventFrame(event.type, payload, event.id));
      sse.end();
    },
    progress: sendProgress,
  });
  const sse = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, follower.unsubscribe);
  if (follower.deliver(missed)) return;
  if (lastId === undefined && from !== streamStart) {
    // Resumed with nothing missed: the client's last event is the stream's last.
    const last = await lastEvent(deps.sql, stream);
    lastId = last?.id;
    if (last?.type === parts.kind.events.progress.type) shown = last.payload as typeof shown;
  }
  // As the row was read (just before the events): sent only if it is ahead of them.
  if (row.progress) sendProgress({ type: parts.kind.events.progress.type, payload: row.progress });
  follower.subscribe(missed.at(-1)?.seq ?? from, sse.drained);
  if (!sse.open) follower.unsubscribe();
}

/**
 * What following a generation's events is, whoever presents them (its SSE stream above, an MCP tool
 * waiting for its result): each event up to the final one to `event`, then the final one to `final` and
 * nothing more; the progress its job announces between events to `progress`. `deliver` hands it events
 * read from the log; `subscribe` follows the hub from a position.
 */
export function generationFollower(
  hub: EventHub,
  kind: GenerationKind<GenerationRow, never>,
  id: string,
  handlers: { event(event: StoredEvent): void; final(event: StoredEvent): unknown; progress(note: ProgressNote): void },
) {
  const isFinal = isFinalOf(kind);
  let ended = false;
  let unsubscribe = () => {};
  /** Answers whether the final event came. */
  const deliver = (events: readonly StoredEvent[]) => {
    for (const event of events) {
      if (isFinal(event.type)) {
        ended = true;
        unsubscribe();
        void handlers.final(event);
        return true;
      }
      handlers.event(event);
    }
    return false;
  };
  return {
    deliver,
    subscribe(from: Position, drained?: () => Promise<void>) {
      if (!ended)
        unsubscribe = hub.subscribe(generationStream(kind, id), from, (events) => void deliver(events), drained, handlers.progress);
    },
    unsubscribe: () => unsubscribe(),
  };
}
