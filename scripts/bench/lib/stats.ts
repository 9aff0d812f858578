/** The figures a benchmark reports: percentiles, medians and rounding for JSON. */

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Rounds to `digits` decimals for JSON; null for NaN and infinities (JSON has neither). */
export const round = (value: number, digits = 2) => (Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : null);

/** Seconds since `started` (a performance.now() time). */
export const secondsSince = (started: number) => (performance.now() - started) / 1000;

export interface Distribution {
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** Count, percentiles, maximum and mean of `values` (any order), rounded to `digits`. */
export function distribution(values: ArrayLike<number>, digits = 1): Distribution {
  const sorted = Float64Array.from(values)
    .filter((value) => Number.isFinite(value))
    .sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50), digits),
    p95: round(percentile(sorted, 95), digits),
    p99: round(percentile(sorted, 99), digits),
    max: round(sorted.length ? sorted[sorted.length - 1]! : Number.NaN, digits),
    mean: round(sorted.length ? sum / sorted.length : Number.NaN, digits),
  };
}
