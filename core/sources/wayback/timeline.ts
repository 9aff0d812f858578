/** Finding the newest capture of a page that is not a removal notice, with few reads. */
import type { CdxRow } from './cdx.ts';
import type { RemovalCategory } from './watchPage.ts';

export type Probe<T> = { kind: 'good'; value: T } | { kind: 'notice'; reason: string; category?: RemovalCategory } | { kind: 'skip' };

export interface TimelineResult<T> {
  good?: { row: CdxRow; value: T };
  notice?: { row: CdxRow; reason: string; category?: RemovalCategory };
  /** The newest capture looked at was a notice. */
  newestIsNotice: boolean;
}

/**
 * Looks at up to `maxProbes` captures (ascending by time) to find the newest one that is not a
 * removal notice: the newest first; if it is a notice, the oldest; then bisection between the
 * newest good and the oldest notice seen. Captures that are neither (bot checks, broken pages)
 * are stepped over.
 */
export async function probeTimeline<T>(
  rows: CdxRow[],
  maxProbes: number,
  probe: (row: CdxRow) => Promise<Probe<T>>,
): Promise<TimelineResult<T>> {
  const result: TimelineResult<T> = { newestIsNotice: false };
  const probed = new Set<number>();
  let good = -1;
  let bad = rows.length;
  const next = (): number | undefined => {
    if (probed.size === 0) return rows.length - 1;
    if (good < 0) {
      for (let i = 0; i < bad; i++) if (!probed.has(i)) return i;
      return undefined;
    }
    const mid = Math.floor((good + bad) / 2);
    for (let step = 0; mid - step > good || mid + step < bad; step++) {
      if (mid + step < bad && mid + step > good && !probed.has(mid + step)) return mid + step;
      if (mid - step > good && mid - step < bad && !probed.has(mid - step)) return mid - step;
    }
    return undefined;
  };
  for (let count = 0; count < maxProbes && rows.length > 0; count++) {
    const index = next();
    if (index === undefined) break;
    const first = probed.size === 0;
    probed.add(index);
    const row = rows[index]!;
    const outcome = await probe(row);
    if (outcome.kind === 'good') {
      if (!result.good || index > good) result.good = { row, value: outcome.value };
      good = Math.max(good, index);
      if (index === rows.length - 1) break;
    } else if (outcome.kind === 'notice') {
      if (first) result.newestIsNotice = true;
      if (!result.notice || row.timestamp > result.notice.row.timestamp) {
        result.notice = { row, reason: outcome.reason, ...(outcome.category ? { category: outcome.category } : {}) };
      }
      bad = Math.min(bad, index);
    }
  }
  return result;
}
