import type { Queryable, Sql } from '../db/database.ts';
import type { TypedEvent } from './defineEvent.ts';
import type { Logger } from '../log.ts';

/**
 * Where an event sits in its stream: its number there, 1, 2, 3… without gaps (migration 026). 0 is
 * before the first event.
 */
export type Position = number;

/** `id` is the event's own id, unique across streams: what streams send as the SSE id, so an id of another stream is recognised as such. */
export interface StoredEvent {
  id: string;
  seq: Position;
  type: string;
  payload: unknown;
}

export const crawlStream = (crawlId: string | number) => `crawl:${crawlId}`;

/** Before the first event: a stream followed from its start. */
export const streamStart: Position = 0;

/** What the id column holds: a bigint. */
const BIGINT_MAX = 2n ** 63n - 1n;

/** An event id as the streams send it (`12345`); anything else, or out of the column's range, is undefined (never reaches a query). */
export function parseEventId(value: string): string | undefined {
  return /^\d{1,19}$/.test(value) && BigInt(value) <= BIGINT_MAX ? value : undefined;
}

/**
 * Appends events (made by their constructors, e.g. searchEvents) to a stream inside the caller's
 * transaction, numbered after the stream's last. Taking the numbers locks the stream's row until
 * the transaction ends, so numbers commit in order; NOTIFY follows at commit (trigger).
 */
export async function appendEvents(sql: Queryable, stream: string, events: readonly TypedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`
    with head as (
      insert into event_streams as s (stream, last_seq) values (${stream}, ${events.length})
      on conflict (stream) do update set last_seq = s.last_seq + excluded.last_seq
      returning last_seq)
    insert into events (stream, seq, type, payload)
    select ${stream}, head.last_seq - ${events.length} + e.n, e.type, e.payload
    from head, rows from (jsonb_to_recordset(${JSON.stringify(events)}::text::jsonb) as (type text, payload jsonb)) with ordinality as e(type, payload, n)`;
}

/**
 * Appends events to many streams in one statement (a fan-out's batch), each stream's in the order
 * given, numbered after its last; the streams' rows are taken in name order, the order every such
 * writer takes them in, so two writers never wait on each other in a circle. An event object given for
 * several streams is sent once (a change fanned out to thirty watchlists: one payload, not thirty).
 */
export async function appendToStreams(sql: Queryable, entries: readonly { stream: string; event: TypedEvent }[]): Promise<void> {
  if (entries.length === 0) return;
  const indexOf = new Map<TypedEvent, number>();
  const events: TypedEvent[] = [];
  const eventIndexes = entries.map(({ event }) => {
    let index = indexOf.get(event);
    if (index === undefined) indexOf.set(event, (index = events.push(event) - 1));
    return index;
  });
  await sql`
    with sent as (
      select (e.n - 1)::int as index, e.type, e.payload
      from rows from (jsonb_to_recordset(${JSON.stringify(events)}::text::jsonb) as (type text, payload jsonb)) with ordinality as e(type, payload, n)),
    batch as (
      select r.stream, s.type, s.payload, row_number() over (partition by r.stream order by r.n) as k, count(*) over (partition by r.stream) as size
      from unnest(${entries.map((entry) => entry.stream)}::text[], ${eventIndexes}::int[]) with ordinality as r(stream, index, n)
      join sent s using (index)),
    heads as (
      insert into event_streams as s (stream, last_seq)
      select stream, max(size) from batch group by stream order by stream
      on conflict (stream) do update set last_seq = s.last_seq + excluded.last_seq
      returning stream, last_seq)
    insert into events (stream, seq, type, payload)
    select b.stream, h.last_seq - b.size + b.k, b.type, b.payload from batch b join heads h using (stream)
    order by b.stream, b.k`;
}

/** Events of a stream after `after`, oldest first; `more` says the page was full, so there may be more to read now. */
export async function readEvents(
  sql: Queryable,
  stream: string,
  after: Position,
  limit: number,
): Promise<{ events: StoredEvent[]; more: boolean }> {
  const events = await sql<StoredEvent[]>`
    select id::text as id, seq, type, payload from events where stream = ${stream} and seq > ${after} order by seq limit ${limit}`;
  return { events, more: events.length === limit };
}

/** The stream's last committed event (a finished generation's is its final one); undefined: none (yet, or any more). */
export async function lastEvent(sql: Queryable, stream: string): Promise<StoredEvent | undefined> {
  const [event] = await sql<
    StoredEvent[]
  >`select id::text as id, seq, type, payload from events where stream = ${stream} order by seq desc limit 1`;
  return event;
}

/** The number of the stream's last committed event (0: none yet). */
export async function streamHead(sql: Queryable, stream: string): Promise<Position> {
  const [head] = await sql<{ lastSeq: Position }[]>`select last_seq as "lastSeq" from event_streams where stream = ${stream}`;
  return head?.lastSeq ?? streamStart;
}

/** Where the event with this id sits in `stream` (a client's Last-Event-ID names one it received); undefined when it is no event of `stream`. */
export async function positionOf(sql: Queryable, stream: string, eventId: string): Promise<Position | undefined> {
  const [found] = await sql<{ seq: Position }[]>`select seq from events where stream = ${stream} and id = ${eventId}::bigint`;
  return found?.seq;
}

// Progress kept as a row's state (progressState): the latest in the row's `progress` column, its milestones in the log.

/** A row's progress is written this often at most: its clients need the latest percent and each stage, not every step. */
const PROGRESS_INTERVAL_MS = 250;

/** Where the latest progress of a stream is announced (payload: the stream, a newline, the event as JSON); the event hub listens. */
export const PROGRESS_CHANNEL = 'afterimage_progress';

/** The rows that keep their job's latest progress in a `progress` column (migration 027). */
export type ProgressTable = 'crawls' | 'summaries' | 'stenograms';

/** A progress event as announced on PROGRESS_CHANNEL: not in the event log, so without a number or id of its own. */
export interface ProgressNote {
  type: string;
  payload: unknown;
}

/**
 * Writes a row's latest progress and, unless it was logged as a milestone (whose NOTIFY tells the
 * followers), announces it to the stream's followers, in one statement (nothing when the row is gone).
 */
async function writeProgress(
  sql: Queryable,
  table: ProgressTable,
  id: string,
  stream: string,
  latest: TypedEvent,
  logged: boolean,
): Promise<void> {
  const note = logged ? null : `${stream}\n${JSON.stringify({ type: latest.type, payload: latest.payload })}`;
  await sql`
    with updated as (update ${sql(table)} set progress = ${JSON.stringify(latest.payload)}::text::jsonb where id = ${id}::bigint returning 1)
    select pg_notify(${PROGRESS_CHANNEL}, ${note}) from updated where ${note}::text is not null`;
}

/** A generation's milestones: each change of stage. */
export const newStage = <P extends { stage?: unknown }>(next: P, previous: P | undefined) => next.stage !== previous?.stage;

/**
 * A job's progress as state: `report` keeps the latest in the row's progress column and announces
 * it on PROGRESS_CHANNEL, at most once per PROGRESS_INTERVAL_MS, one write at a time, outside the
 * job's transaction and never holding the job up. What `milestone` says is one (e.g. newStage) is
 * also appended to the event log (same transaction), so a client that reconnects learns each of
 * them; the percents in between live only in the column. A failed write loses only
 * itself (logged). The percentage never goes backwards; `within(from, to)` maps a generator's own
 * 0–100 into the job's band. `flushed()` writes what is left at once and settles once all is written or lost.
 */
export function progressState<P extends { percent: number; stage?: unknown }>(
  sql: Sql,
  log: Logger,
  target: { table: ProgressTable; id: string; stream: string; milestone: (next: P, previous: P | undefined) => boolean },
  toEvent: (progress: P) => TypedEvent,
) {
  let milestones: TypedEvent[] = [];
  let latest: TypedEvent | undefined;
  let latestLogged = false;
  let previous: P | undefined;
  let writing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastWriteAt = -Infinity;
  let reached = 0;

  const writeNow = (): Promise<void> => {
    if (writing || !latest) return writing ?? Promise.resolve();
    clearTimeout(timer);
    timer = undefined;
    const [batch, event, logged] = [milestones, latest, latestLogged];
    [milestones, latest] = [[], undefined];
    lastWriteAt = Date.now();
    const write = batch.length
      ? sql.begin(async (tx) => {
          await appendEvents(tx, target.stream, batch);
          await writeProgress(tx, target.table, target.id, target.stream, event, logged);
        })
      : writeProgress(sql, target.table, target.id, target.stream, event, false);
    writing = write
      .then(() => undefined)
      .catch((error: unknown) => log.warn('progress lost', { stream: target.stream, milestones: batch.length, err: error }))
      .finally(() => {
        writing = undefined;
        writeLater();
      });
    return writing;
  };
  function writeLater() {
    if (timer || writing || !latest) return;
    timer = setTimeout(() => void writeNow(), Math.max(0, lastWriteAt + PROGRESS_INTERVAL_MS - Date.now()));
  }

  const report = (progress: P) => {
    reached = Math.max(reached, Math.min(100, Math.round(progress.percent)));
    const next = { ...progress, percent: reached };
    latest = toEvent(next);
    latestLogged = target.milestone(next, previous);
    if (latestLogged) milestones.push(latest);
    previous = next;
    writeLater();
  };
  const within = (from: number, to: number) => (progress: P) =>
    report({ ...progress, percent: from + (progress.percent * (to - from)) / 100 });
  const flushed = async () => {
    while (writing || latest) await (writing ?? writeNow());
  };
  return Object.assign(report, { within, flushed });
}
