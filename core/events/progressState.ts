import type { Queryable, Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { TypedEvent } from './defineEvent.ts';
import { appendEvents } from './events.ts';

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
