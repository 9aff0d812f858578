/**
 * Counting limits: the window arithmetic (a sliding window as two fixed buckets, the utc_day window),
 * and every charge of a request as one statement on the counters (consumeQuotas), refunds in one too.
 */
import type { Queryable, Sql } from '../db/database.ts';
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

export type QuotaDecision = QuotaState & {
  allowed: boolean;
  retryAfterSeconds?: number /** The bucket the units were counted in (when allowed): where a refund goes. */;
  windowStart?: Date;
};

const UNLIMITED = 2_147_483_647;

/** Units of one limit to count for one subject. */
interface QuotaCharge {
  subject: string;
  rule: CountedLimit;
  units?: number;
  /**
   * false: counted, never refused (an administrator on their own instance). The decision still reports
   * the rule's max and what remains of it, as for anybody.
   */
  enforced?: boolean;
}

/**
 * Counts `units` (default one) of `rule` for `subject` if they all fit, atomically across every process
 * sharing the database: the row lock of the upsert serialises concurrent callers, and refused units are
 * not counted (all or none). Bucket boundaries come from the database clock so that all processes agree
 * on them; `at` replaces that clock (tests of a window's end).
 */
export async function consumeQuota(sql: Sql, subject: string, rule: CountedLimit, units = 1, at?: Date): Promise<QuotaDecision> {
  return (await consumeQuotas(sql, [{ subject, rule, units }], at))[0]!;
}

/**
 * Counts several limits in one statement (one round trip), in order, as consumeQuota would one after
 * the other: each charge is counted only if it fits and every charge before it was counted
 * (consume_quotas, sql/038_per_request_work.sql). The decisions end at the first refused charge (the
 * ones after it were not tried). The same (subject, limit) must not appear twice; callers list the
 * limits in one fixed order (requestsPerMinute first) so that concurrent statements lock the counter
 * rows in the same order.
 */
export async function consumeQuotas(sql: Sql, charges: readonly QuotaCharge[], at?: Date): Promise<QuotaDecision[]> {
  const rows = await sql<{ used_now: number; previous_used: number; elapsed: number; bucket_start: Date }[]>`
    select used_now, previous_used, elapsed, bucket_start from consume_quotas(
      ${charges.map((charge) => charge.subject)}::uuid[], ${charges.map((charge) => charge.rule.name)}::text[],
      ${charges.map((charge) => charge.rule.window)}::text[], ${charges.map((charge) => charge.rule.windowSeconds)}::int[],
      ${charges.map((charge) => charge.units ?? 1)}::int[],
      ${charges.map((charge) => (charge.enforced === false ? UNLIMITED : (charge.rule.max ?? UNLIMITED)))}::int[],
      ${at ?? null}::timestamptz)`;
  const decisions: QuotaDecision[] = [];
  for (const [index, row] of rows.entries()) {
    const bucket = { used: row.used_now, previous: row.previous_used, elapsed: row.elapsed };
    decisions.push({ ...quotaState(charges[index]!.rule, bucket), allowed: true, windowStart: row.bucket_start });
  }
  const refused = charges[rows.length];
  if (refused) {
    const [bucket] = await readBuckets(sql, [refused], at);
    decisions.push({
      ...quotaState(refused.rule, bucket!),
      allowed: false,
      retryAfterSeconds: retryAfterSeconds(refused.rule, bucket!, refused.units),
    });
  }
  return decisions;
}

/** The current and previous bucket of each (subject, limit) pair, in one query, on the database clock. */
async function readBuckets(sql: Sql, wanted: Array<{ subject: string; rule: CountedLimit }>, at?: Date): Promise<Bucket[]> {
  const subjects = [...new Set(wanted.map((entry) => entry.subject))];
  const [row] = await sql<{ nowS: number; counters: Array<{ subject: string; limit: string; start: number; used: number }> }[]>`
    select extract(epoch from coalesce(${at ?? null}::timestamptz, clock_timestamp()))::float8 as "nowS",
      coalesce((select json_agg(json_build_object('subject', subject, 'limit', limit_name, 'start', extract(epoch from window_start), 'used', used))
        from usage_counters where subject = any(${subjects}::uuid[]) and window_start > now() - interval '2 days'), '[]') as counters`;
  const { nowS, counters } = row!;
  const usedAt = (subject: string, limit: string, start: number) =>
    counters.find((counter) => counter.subject === subject && counter.limit === limit && Math.abs(counter.start - start) < 0.5)?.used ?? 0;
  return wanted.map(({ subject, rule }) => {
    const currentStart = Math.floor(nowS / rule.windowSeconds) * rule.windowSeconds;
    return {
      used: usedAt(subject, rule.name, currentStart),
      previous: usedAt(subject, rule.name, currentStart - rule.windowSeconds),
      elapsed: (nowS - currentStart) / rule.windowSeconds,
    };
  });
}

/** The state of every given limit, without counting anything. */
export async function readQuotas(sql: Sql, wanted: Array<{ subject: string; rule: CountedLimit }>): Promise<QuotaState[]> {
  const buckets = await readBuckets(sql, wanted);
  return wanted.map(({ rule }, index) => quotaState(rule, buckets[index]!));
}

/** Units counted in one bucket (the one that starts at `windowStart`), to give back. */
export interface CountedUnits {
  subject: string;
  limit: string;
  windowStart: Date;
  units?: number;
}

/**
 * Gives back units counted for work that was never done (a failed generation, a request that ended not
 * found), each in the bucket it was counted in, all in one statement. The same counter may appear more
 * than once: its units are added up first, since an update changes each row once.
 */
export async function refundQuotas(sql: Queryable, counted: readonly CountedUnits[]): Promise<void> {
  const byCounter = new Map<string, CountedUnits & { units: number }>();
  for (const entry of counted) {
    const key = `${entry.subject} ${entry.limit} ${entry.windowStart.toISOString()}`;
    const units = (byCounter.get(key)?.units ?? 0) + (entry.units ?? 1);
    byCounter.set(key, { ...entry, units });
  }
  const entries = [...byCounter.values()];
  if (entries.length === 0) return;
  await sql`
    update usage_counters c set used = greatest(c.used - r.units, 0)
    from unnest(${entries.map((entry) => entry.subject)}::uuid[], ${entries.map((entry) => entry.limit)}::text[],
      ${entries.map((entry) => entry.windowStart.toISOString())}::timestamptz[], ${entries.map((entry) => entry.units)}::int[])
      as r(subject, limit_name, window_start, units)
    where c.subject = r.subject and c.limit_name = r.limit_name and c.window_start = r.window_start`;
}
