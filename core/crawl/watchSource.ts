/**
 * A source as a crawl meets it: how long a step or a search waits on it (watchSource), the retries the
 * stream is told of while it waits (retryProgress), and its health over the crawls (sourceHealth).
 */
import type { Queryable, Sql } from '../db/database.ts';
import { crawlStream, progressState } from '../events/events.ts';
import { searchEvents } from '../events/searchEvents.ts';
import type { Logger } from '../log.ts';
import { observeAttempts } from '../sources/http.ts';
import { TransientError } from '../sources/httpErrors.ts';

/** A request to a source failed and is tried again (search:progress `retry`). */
export interface SourceRetry {
  /** Failed attempts of that request so far. */
  attempt: number;
  error: string;
  nextTryAt: string;
  /** When the source is given up on if nothing answers before. */
  giveUpAt: string;
}

/**
 * Runs calls to a source (`work`, given the signal that stops them), reports each failed request
 * that will be tried again, and stops them all once the source has answered nothing for `budgetMs`
 * (an answer, even a definite refusal, starts the wait again). A source that is down or timing out
 * holds its caller that long at most, instead of its requests' whole retry schedule; a slow source
 * that keeps answering is never cut off. The stop is a TransientError, so a source that already
 * has partial results (the Wayback walk) hands them back as after any transient failure: `gaveUp`
 * says it was stopped.
 */
export async function watchSource<T>(
  source: string,
  budgetMs: number,
  onRetry: (retry: SourceRetry) => void,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<{ result: T; gaveUp?: Error }> {
  const controller = new AbortController();
  let lastError: string | undefined;
  let giveUpAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const restart = () => {
    clearTimeout(timer);
    giveUpAt = Date.now() + budgetMs;
    timer = setTimeout(() => {
      const why = lastError ? `; last error: ${lastError}` : '';
      controller.abort(new TransientError(`${source} gave no answer for ${budgetMs / 1000} s${why}`));
    }, budgetMs);
  };
  restart();
  try {
    const result = await observeAttempts(
      (outcome) => {
        if (outcome.answered) return restart();
        lastError = outcome.error.message;
        if (outcome.nextTryAt)
          onRetry({
            attempt: outcome.attempt,
            error: lastError,
            nextTryAt: outcome.nextTryAt.toISOString(),
            giveUpAt: new Date(giveUpAt).toISOString(),
          });
      },
      () => work(controller.signal),
    );
    return controller.signal.aborted ? { result, gaveUp: controller.signal.reason as Error } : { result };
  } catch (error) {
    // Whatever a stopped call failed with, the reason is that the source answered nothing.
    throw controller.signal.aborted ? controller.signal.reason : error;
  } finally {
    clearTimeout(timer);
  }
}

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

export interface SourceHealth {
  source: string;
  /** The start of the last crawl that read this source. */
  lastCrawlAt: string;
  /** The start of the last crawl the source answered without failing; null when it never did. */
  lastSuccessAt: string | null;
  /** Why the source failed in its last crawl; null when it answered. */
  lastError: string | null;
  /** The first failure since its last success: the source fails since then (null: its last crawl succeeded). */
  failingSince: string | null;
  /** Crawls the source failed in during the last day. */
  failuresLastDay: number;
}

/**
 * Each source's last crawl and its failures, as the crawls' totals record them (`totals.sources.<name>.error`,
 * addBatch of crawlStep.ts). One statement over the crawls (one row per crawl, not per video).
 */
export async function sourceHealth(sql: Queryable): Promise<SourceHealth[]> {
  return sql<SourceHealth[]>`
    with reads as (
      select s.key as source, c.started_at, s.value->>'error' as error
      from crawls c cross join lateral jsonb_each(coalesce(c.totals->'sources', '{}')) s
    ), last_success as (
      select source, max(started_at) filter (where error is null) as at from reads group by source
    )
    select r.source,
      to_json(max(r.started_at))#>>'{}' as "lastCrawlAt",
      to_json(l.at)#>>'{}' as "lastSuccessAt",
      (array_agg(r.error order by r.started_at desc))[1] as "lastError",
      to_json(min(r.started_at) filter (where r.error is not null and r.started_at > coalesce(l.at, '-infinity')))#>>'{}' as "failingSince",
      (count(*) filter (where r.error is not null and r.started_at > now() - interval '1 day'))::int as "failuresLastDay"
    from reads r join last_success l using (source)
    group by r.source, l.at order by r.source`;
}
