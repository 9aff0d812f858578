import type { LimitRule } from '../schemas.ts';

/** What counting needs of a limit: a tier's (LimitRule) or one of no tier's, such as sign-in attempts. */
export type CountedLimit = Omit<LimitRule, 'name'> & { name: string };

/** One limit's state for one subject: what the RateLimit headers and /api/features report. */
export interface QuotaState {
  name: string;
  unit: string;
  max: number | null;
  used: number;
  remaining: number | null;
  /** Seconds until the current window bucket ends (for utc_day: until midnight UTC). */
  resetSeconds: number;
  windowSeconds: number;
  window: LimitRule['window'];
}

export interface Bucket {
  used: number;
  previous: number;
  elapsed: number;
}

/**
 * Sliding windows are approximated from two fixed buckets: the previous bucket counts in proportion
 * to how much of it still lies inside the window. A utc_day window is just the current bucket.
 */
export function estimateUsed(rule: Pick<LimitRule, 'window'>, bucket: Bucket): number {
  const carried = rule.window === 'sliding' ? Math.floor(bucket.previous * (1 - bucket.elapsed)) : 0;
  return bucket.used + carried;
}

/** Seconds until the bucket ends, to the millisecond (so float noise never rounds a whole second up). */
const secondsLeft = (bucket: Bucket, windowSeconds: number) => Math.round((1 - bucket.elapsed) * windowSeconds * 1000) / 1000;

export function quotaState(rule: CountedLimit, bucket: Bucket): QuotaState {
  const used = estimateUsed(rule, bucket);
  return {
    name: rule.name,
    unit: rule.unit,
    max: rule.max,
    used,
    remaining: rule.max === null ? null : Math.max(0, rule.max - used),
    resetSeconds: Math.max(1, Math.ceil(secondsLeft(bucket, rule.windowSeconds))),
    windowSeconds: rule.windowSeconds,
    window: rule.window,
  };
}

/** Seconds until `units` more (default one) fit under the limit (a whole window when they never can). */
export function retryAfterSeconds(rule: CountedLimit, bucket: Bucket, units = 1): number {
  const W = rule.windowSeconds;
  const untilBucketEnds = secondsLeft(bucket, W);
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  if (max === 0 || units > max) return Math.ceil(untilBucketEnds + (rule.window === 'sliding' ? W : 0));
  const room = max - (units - 1);
  if (rule.window === 'utc_day') return Math.max(1, Math.ceil(untilBucketEnds));
  if (bucket.used < room && bucket.previous > 0) {
    // Within this bucket, once enough of the previous bucket has slid out of the window.
    const elapsedNeeded = 1 - (room - bucket.used) / bucket.previous;
    return Math.max(1, Math.ceil((elapsedNeeded - bucket.elapsed) * W));
  }
  // In the next bucket this one becomes "previous" and must slide out far enough.
  const elapsedNeeded = Math.max(0, 1 - room / Math.max(bucket.used, 1));
  return Math.max(1, Math.ceil(untilBucketEnds + elapsedNeeded * W));
}

export function describeReset(seconds: number, now = Date.now()): string {
  return new Date(now + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
