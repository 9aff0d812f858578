import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { TypedEvent } from './defineEvent.ts';
import { appendEvents } from './events.ts';

/**
 * Appends a job's progress events in the order reported, one at a time and outside its
 * transaction, never holding the job up: a failed write loses only that event (logged).
 * `flushed()` settles once every reported event is written or lost.
 */
export function progressAppender<P>(sql: Sql, log: Logger, stream: string, toEvent: (progress: P) => TypedEvent) {
  let chain = Promise.resolve();
  const report = (progress: P) => {
    chain = chain
      .then(() => appendEvents(sql, stream, [toEvent(progress)]))
      .catch((error: unknown) => log.warn('progress event lost', { stream, err: error }));
  };
  return Object.assign(report, { flushed: () => chain });
}
