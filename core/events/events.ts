import type { Queryable } from '../db/database.ts';
import type { TypedEvent } from './defineEvent.ts';

/** Where an event sits in its stream: transaction id first, so late commits are never skipped. */
export interface Position { xid: string; id: string }

export interface StoredEvent { xid: string; id: string; type: string; payload: unknown }

export const crawlStream = (crawlId: string | number) => `crawl:${crawlId}`;

export const formatPosition = (position: Position) => `${position.xid}.${position.id}`;
// What the columns hold: xid8 is unsigned 64-bit, the id a bigint.
const XID8_MAX = 2n ** 64n - 1n;
const BIGINT_MAX = 2n ** 63n - 1n;

/** A position as `formatPosition` writes it; anything else, or out of the columns' range, is undefined (never reaches a query). */
export function parsePosition(value: string): Position | undefined {
  const match = /^(\d{1,20})\.(\d{1,19})$/.exec(value);
  if (!match || BigInt(match[1]!) > XID8_MAX || BigInt(match[2]!) > BIGINT_MAX) return undefined;
  return { xid: match[1]!, id: match[2]! };
}
export const comparePositions = (a: Position, b: Position) =>
  BigInt(a.xid) === BigInt(b.xid) ? Number(BigInt(a.id) - BigInt(b.id)) : BigInt(a.xid) < BigInt(b.xid) ? -1 : 1;

/**
 * Appends events (made by their constructors, e.g. searchEvents) to a stream inside the caller's
 * transaction; NOTIFY follows at commit (trigger).
 */
export async function appendEvents(sql: Queryable, stream: string, events: readonly TypedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`
    insert into events (stream, type, payload)
    select ${stream}, e.type, e.payload from jsonb_to_recordset(${JSON.stringify(events)}::text::jsonb) as e(type text, payload jsonb)`;
}

/**
 * Events of a stream after `after`, oldest first, up to the visibility horizon: an event is only
 * returned once every transaction older than its own has ended. `heldBack` says more are committed
 * or coming beyond the horizon, so the caller should look again shortly.
 */
export async function readEvents(sql: Queryable, stream: string, after: Position, limit: number): Promise<{ events: StoredEvent[]; heldBack: boolean }> {
  // Ordered by the columns, not the text aliases of the same names (which would sort "10" before "9").
  const rows = await sql<(StoredEvent & { visible: boolean })[]>`
    select xid::text as xid, id::text as id, type, payload, xid < pg_snapshot_xmin(pg_current_snapshot()) as visible
    from events
    where stream = ${stream} and (xid, id) > (${after.xid}::xid8, ${after.id}::bigint)
    order by events.xid, events.id
    limit ${limit}`;
  const firstHidden = rows.findIndex((row) => !row.visible);
  const visible = firstHidden === -1 ? rows : rows.slice(0, firstHidden);
  return {
    events: visible.map(({ visible: _visible, ...event }) => event),
    heldBack: firstHidden !== -1 || rows.length === limit,
  };
}

/** The position of the stream's last event that no later commit can come before (see readEvents), if any. */
export async function finalHead(sql: Queryable, stream: string): Promise<Position | undefined> {
  const [head] = await sql<Position[]>`
    select xid::text as xid, id::text as id from events
    where stream = ${stream} and xid < pg_snapshot_xmin(pg_current_snapshot())
    order by events.xid desc, events.id desc
    limit 1`;
  return head;
}

/** Whether the stream holds an event at exactly this position (a client's Last-Event-ID names one it received). */
export async function hasEventAt(sql: Queryable, stream: string, position: Position): Promise<boolean> {
  const [found] = await sql`select 1 from events where stream = ${stream} and xid = ${position.xid}::xid8 and id = ${position.id}::bigint`;
  return Boolean(found);
}

/** Whether the stream has an event after `after` (committed or not). */
export async function hasEventsAfter(sql: Queryable, stream: string, after: Position): Promise<boolean> {
  const [more] = await sql`select 1 from events where stream = ${stream} and (xid, id) > (${after.xid}::xid8, ${after.id}::bigint) limit 1`;
  return Boolean(more);
}
