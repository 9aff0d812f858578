import type { Queryable } from '../db/database.ts';

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
 * core/crawl/totals.ts). One statement over the crawls (one row per crawl, not per video).
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
