/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Rounded for JSON, which has no NaN or infinities: null for those. */
export const round = (value: number, digits = 2) => (Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : null);

/** Seconds since a performance.now() time. */
export const secondsSince = (started: number) => (performance.now() - started) / 1000;

export interface Distribution {
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** Count, percentiles, maximum and mean of `values` in any order, rounded to `digits`. */
export function distribution(values: ArrayLike<number>, digits = 1): Distribution {
  const sorted = Float64Array.from(values)
    .filter((value) => Number.isFinite(value))
    .sort();
  const at = (p: number) => round(percentile(sorted, p), digits);
  return {
    count: sorted.length,
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: at(100),
    mean: round(sorted.reduce((sum, value) => sum + value, 0) / sorted.length, digits),
  };
}
