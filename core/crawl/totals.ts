import type { CrawlTotals } from '../events/searchEvents.ts';

export interface BatchCounts {
  /** Videos the source listed in this step. */
  videos: number;
  /** Of them, stored for the first time. */
  inserted: number;
  /** Of them, stored or changed (sent as search:video). */
  changed: number;
  /** The source failed in this step. */
  failure?: string;
}

/** The crawl's totals with one step's batch of `source` added (an earlier error of the source stays unless replaced). */
export function addBatch(totals: CrawlTotals, source: string, batch: BatchCounts): CrawlTotals {
  const before = totals.sources?.[source];
  return {
    ...totals,
    videos: (totals.videos ?? 0) + batch.videos,
    new: (totals.new ?? 0) + batch.inserted,
    sources: {
      ...totals.sources,
      [source]: {
        ...before,
        videos: (before?.videos ?? 0) + batch.videos,
        changed: (before?.changed ?? 0) + batch.changed,
        ...(batch.failure ? { error: batch.failure } : {}),
      },
    },
  };
}
