import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from '../../../core/db/database.ts';
import { distribution } from '../lib/stats.ts';
import type { StreamRecord } from './streams.ts';

export interface EventRow {
  stream: string;
  videoId: string;
  id: string;
  type: string;
  createdMs: number;
  bytes: number;
  stage: string | null;
  percent: number | null;
}
export interface Notification {
  stream: string;
  at: number;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item));
    if (list) list.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** The wall clock (ms since the epoch, fractional) of a performance.now() time: one offset, taken just before the burst. */
export function wallClock(): (at: number) => number {
  const offsets: number[] = [];
  for (let i = 0; i < 200; i++) offsets.push(Date.now() - performance.now());
  // Date.now() has whole ms: the highest offset is the one taken just after a tick.
  const offset = Math.max(...offsets);
  return (at) => offset + at;
}

/** Markdown files in the file store (DATA_DIR/stenograms/<user>/<video>.md) and their bytes. */
export async function storedFiles(root: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const user of await readdir(root).catch(() => [] as string[])) {
    for (const name of await readdir(join(root, user)).catch(() => [] as string[])) {
      if (!name.endsWith('.md') || name.startsWith('.')) continue;
      files++;
      bytes += (await stat(join(root, user, name))).size;
    }
  }
  return { files, bytes };
}

/** Index scans of the events table by stream (readEvents, finalHead): every read of the API's hub. Counted once the API's sessions have ended and flushed their statistics. */
export async function eventReads(sql: Sql): Promise<number> {
  const [row] = await sql<
    { scans: number }[]
  >`select coalesce(sum(idx_scan), 0)::float8 as scans from pg_stat_user_indexes where indexrelname = 'events_stream_seq'`;
  return row?.scans ?? Number.NaN;
}

/**
 * Per delivered event: arrival − its commit's NOTIFY here, and arrival − created_at; by event type, and
 * `live` for the events committed after their client had stenogram:started (the stream was following).
 */
export function deliveryLatency(records: StreamRecord[], rows: EventRow[], notifications: Notification[], wall: (at: number) => number) {
  const notified = groupBy(notifications, (note) => note.stream);
  // The k-th notification of a stream is the commit of its k-th transaction (one after another); the
  // events of one transaction share its start time (created_at), and a stream's transactions follow its numbering.
  const commitAt = new Map<string, number>();
  let mismatchedStreams = 0;
  for (const [stream, events] of groupBy(rows, (row) => row.stream)) {
    const times = notified.get(stream) ?? [];
    const transactions = [...groupBy(events, (event) => String(event.createdMs)).values()];
    if (times.length !== transactions.length) mismatchedStreams++;
    else transactions.forEach((batch, index) => batch.forEach((event) => commitAt.set(event.id, times[index]!.at)));
  }
  const rowById = new Map(rows.map((row) => [row.id, row]));
  const fromCommit: Record<string, number[]> = { all: [], live: [] };
  const fromTxStart: Record<string, number[]> = { all: [], live: [] };
  let unmatched = 0;
  for (const record of records) {
    const startedAt = record.events.find((event) => event.type === 'stenogram:started')?.at ?? Number.POSITIVE_INFINITY;
    for (const event of record.events) {
      const row = event.id === undefined ? undefined : rowById.get(event.id);
      if (!row) {
        unmatched++;
        continue;
      }
      const commit = commitAt.get(event.id!);
      const kinds = ['all', event.type, ...(commit !== undefined && commit > startedAt ? ['live'] : [])];
      for (const kind of kinds) {
        if (commit !== undefined) (fromCommit[kind] ??= []).push(event.at - commit);
        (fromTxStart[kind] ??= []).push(wall(event.at) - row.createdMs);
      }
    }
  }
  const summaries = (values: Record<string, number[]>) =>
    Object.fromEntries(Object.entries(values).map(([type, list]) => [type, distribution(list)]));
  return {
    fromCommitMs: summaries(fromCommit),
    fromTxStartMs: summaries(fromTxStart),
    notifications: notifications.length,
    events: rows.length,
    mismatchedStreams,
    unmatchedDeliveries: unmatched,
  };
}

/** From the events table (the database's clock): stenogram:started → first progress (queued, transcript read) → stenogram:complete (generated, stored). */
export function phases(rows: EventRow[]) {
  const queued: number[] = [];
  const working: number[] = [];
  for (const events of groupBy(rows, (row) => row.stream).values()) {
    const started = events.find((event) => event.type === 'stenogram:started');
    const first = events.find((event) => event.type === 'stenogram:progress');
    const complete = events.find((event) => event.type === 'stenogram:complete');
    if (started && first) queued.push(first.createdMs - started.createdMs);
    if (first && complete) working.push(complete.createdMs - first.createdMs);
  }
  return { queuedMs: distribution(queued, 0), inWorkerMs: distribution(working, 0) };
}

/** One stream's events: `type (stage percent) +ms` from the first event's created_at. */
export function timeline(rows: EventRow[]): string[] {
  const start = rows[0]?.createdMs ?? 0;
  return rows.map(
    (row) =>
      `${row.type.replace('stenogram:', '')}${row.stage ? ` ${row.stage} ${row.percent}` : ''} +${Math.round(row.createdMs - start)}`,
  );
}

/** When a stream's first and last progress events and its stenogram:complete were committed, ms after its first event. */
export function spread(rows: EventRow[]) {
  const start = rows[0]?.createdMs ?? Number.NaN;
  const progress = rows.filter((row) => row.type === 'stenogram:progress');
  const at = (row: EventRow | undefined) => (row ? row.createdMs - start : Number.NaN);
  return {
    firstProgressMs: at(progress[0]),
    lastProgressMs: at(progress[progress.length - 1]),
    completeMs: at(rows.find((row) => row.type === 'stenogram:complete')),
  };
}

/** The progress events of a stream as `stage percent`, and how many streams' percentages ever went down. */
export function progressSequence(rows: EventRow[]) {
  const streams = [
    ...groupBy(
      rows.filter((row) => row.type === 'stenogram:progress'),
      (row) => row.stream,
    ).values(),
  ];
  const goesBack = streams.filter((events) =>
    events.some((event, index) => index > 0 && (event.percent ?? 0) < (events[index - 1]!.percent ?? 0)),
  ).length;
  return { first: streams[0]?.map((event) => `${event.stage} ${event.percent}`) ?? [], streams: streams.length, goesBack };
}
