import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { TypedEvent } from './defineEvent.ts';
import { appendEvents } from './events.ts';

/** A stream gets at most one progress write this often: its clients need the latest percent and each stage, not every step. */
const PROGRESS_INTERVAL_MS = 250;

/**
 * Appends a job's progress events in the order reported, outside its transaction, never holding the
 * job up. One write is under way at a time, at most one per PROGRESS_INTERVAL_MS: what is reported
 * meanwhile goes in the next write, one transaction and one NOTIFY, keeping every change of stage
 * (the milestones) and the latest percent within each. A failed write loses only its events
 * (logged). The percentage never goes backwards; `within(from, to)` maps a generator's own 0–100
 * into the job's band. `flushed()` writes what is left at once and settles once all is written or lost.
 */
export function progressAppender<P extends { percent: number; stage?: unknown }>(sql: Sql, log: Logger, stream: string, toEvent: (progress: P) => TypedEvent) {
  let queued: Array<{ stage: unknown; event: TypedEvent }> = [];
  let writing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastWriteAt = -Infinity;
  let reached = 0;

  const writeNow = (): Promise<void> => {
    if (writing || queued.length === 0) return writing ?? Promise.resolve();
    clearTimeout(timer);
    timer = undefined;
    const batch = queued.map((entry) => entry.event);
    queued = [];
    lastWriteAt = Date.now();
    writing = appendEvents(sql, stream, batch)
      .catch((error: unknown) => log.warn('progress events lost', { stream, events: batch.length, err: error }))
      .finally(() => {
        writing = undefined;
        writeLater();
      });
    return writing;
  };
  function writeLater() {
    if (timer || writing || queued.length === 0) return;
    timer = setTimeout(() => void writeNow(), Math.max(0, lastWriteAt + PROGRESS_INTERVAL_MS - Date.now()));
  }

  const report = (progress: P) => {
    reached = Math.max(reached, Math.min(100, Math.round(progress.percent)));
    const entry = { stage: progress.stage, event: toEvent({ ...progress, percent: reached }) };
    if (queued.length > 0 && queued[queued.length - 1]!.stage === entry.stage) queued[queued.length - 1] = entry;
    else queued.push(entry);
    writeLater();
  };
  const within = (from: number, to: number) => (progress: P) => report({ ...progress, percent: from + (progress.percent * (to - from)) / 100 });
  const flushed = async () => {
    while (writing || queued.length) await (writing ?? writeNow());
  };
  return Object.assign(report, { within, flushed });
}
