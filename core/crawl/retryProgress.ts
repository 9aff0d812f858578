import type { Sql } from '../db/database.ts';
import { crawlStream } from '../events/events.ts';
import { progressState } from '../events/progressState.ts';
import { searchEvents } from '../events/searchEvents.ts';
import type { Logger } from '../log.ts';
import type { SourceRetry } from './watchSource.ts';

/** Retries of parallel requests (the Wayback's look-ups) come in bursts: one event a second tells as much. */
const RETRY_EVENT_GAP_MS = 1_000;

/** How far the crawl has said it is: retry progress repeats it rather than go back. */
async function percentSoFar(sql: Sql, crawlId: string): Promise<number> {
  const [row] = await sql<
    { percent: number | null }[]
  >`select (progress->>'percent')::int as percent from crawls where id = ${crawlId}::bigint`;
  return row?.percent ?? 0;
}

/**
 * search:progress events `{stage, percent, retry}` for a crawl step whose source is retrying, written
 * at once (outside the step's transaction, which comes later) so the stream says why it waits: at
 * most one a second, except that a request further into its retries is always told. The crawl's
 * progress column keeps the latest. `flushed()` settles once every report is written (or lost, logged).
 */
export function retryProgress(sql: Sql, log: Logger, crawlId: string, stage: string) {
  // Each retry told is a milestone (the stream says why it waits, to whoever joins later too); the crawl's row keeps the latest.
  const append = progressState(
    sql,
    log,
    { table: 'crawls', id: crawlId, stream: crawlStream(crawlId), milestone: () => true },
    ({ percent, retry }: { percent: number; retry: SourceRetry }) => searchEvents.progress({ stage, percent, retry }),
  );
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
