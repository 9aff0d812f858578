import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { TypedEvent } from './defineEvent.ts';
import { appendEvents } from './events.ts';

/**
 * Appends a job's progress events in the order reported, one at a time and outside its
 * transaction, never holding the job up: a failed write loses only that event (logged). The
 * percentage never goes backwards; `within(from, to)` maps a generator's own 0–100 into the job's
 * band. `flushed()` settles once every reported event is written or lost.
 */
export function progressAppender<P extends { percent: number }>(sql: Sql, log: Logger, stream: string, toEvent: (progress: P) => TypedEvent) {
  let chain = Promise.resolve();
  let reached = 0;
  const report = (progress: P) => {
    reached = Math.max(reached, Math.min(100, Math.round(progress.percent)));
    const event = toEvent({ ...progress, percent: reached });
    chain = chain
      .then(() => appendEvents(sql, stream, [event]))
      .catch((error: unknown) => log.warn('progress event lost', { stream, err: error }));
  };
  const within = (from: number, to: number) => (progress: P) => report({ ...progress, percent: from + (progress.percent * (to - from)) / 100 });
  return Object.assign(report, { within, flushed: () => chain });
}
