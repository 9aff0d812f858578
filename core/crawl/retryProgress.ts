import type { Sql } from '../db/database.ts';
import { crawlStream } from '../events/events.ts';
import { progressAppender } from '../events/progressAppender.ts';
import { searchEvents } from '../events/searchEvents.ts';
import type { Logger } from '../log.ts';
import type { SourceRetry } from './watchSource.ts';

/** Retries of parallel requests (the Wayback's look-ups) come in bursts: one event a second tells as much. */
const RETRY_EVENT_GAP_MS = 1_000;

/** How far the crawl's stream has said it is: retry events repeat it rather than go back. */
async function percentSoFar(sql: Sql, crawlId: string): Promise<number> {
  const [row] = await sql<{ percent: number | null }[]>`
    select max((payload->>'percent')::int) as percent from events where stream = ${crawlStream(crawlId)} and type = ${searchEvents.progress.type}`;
  return row?.percent ?? 0;
}

/**
 * search:progress events `{stage, percent, retry}` for a crawl step whose source is retrying, written
 * at once (outside the step's transaction, which comes later) so the stream says why it waits: at
 * most one a second, except that a request further into its retries is always told.
 * `flushed()` settles once every reported event is written (or lost, logged).
 */
export function retryProgress(sql: Sql, log: Logger, crawlId: string, stage: string) {
  const append = progressAppender(sql, log, crawlStream(crawlId), ({ percent, retry }: { percent: number; retry: SourceRetry }) => searchEvents.progress({ stage, percent, retry }));
  let percent: Promise<number> | undefined;
  let lastAt = -Infinity;
  let furthest = 0;
  const report = (retry: SourceRetry) => {
    const now = Date.now();
    if (retry.attempt <= furthest && now - lastAt < RETRY_EVENT_GAP_MS) return;
    furthest = Math.max(furthest, retry.attempt);
    lastAt = now;
    percent ??= percentSoFar(sql, crawlId).catch(() => 0);
    void percent.then((reached) => append({ percent: reached, retry }));
  };
  const flushed = async () => {
    await percent;
    await append.flushed();
  };
  return Object.assign(report, { flushed });
}
