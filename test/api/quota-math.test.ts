import { describe, expect, it } from 'vitest';
import type { LimitRule } from '../../core/schemas.ts';
import { describeReset, estimateUsed, quotaState, retryAfterSeconds, type Bucket } from '../../core/usage/consumeQuota.ts';

const sliding = (max: number | null, windowSeconds = 60): LimitRule => ({
  name: 'requestsPerMinute',
  description: 'API requests per minute',
  unit: 'requests',
  window: 'sliding',
  windowSeconds,
  countedPer: 'user',
  max,
});
const utcDay = (max: number | null): LimitRule => ({
  name: 'apiStenogramsPerDay',
  description: 'Stenogram generations per API key per day',
  unit: 'stenogram generations',
  window: 'utc_day',
  windowSeconds: 86400,
  countedPer: 'key',
  max,
});
const bucket = (used: number, previous: number, elapsed: number): Bucket => ({ used, previous, elapsed });

describe('estimateUsed', () => {
  it('sliding: adds the share of the previous bucket still inside the window, rounded down', () => {
    expect(estimateUsed(sliding(10), bucket(5, 10, 0.25))).toBe(12); // 5 + floor(7.5)
    expect(estimateUsed(sliding(10), bucket(0, 3, 0.5))).toBe(1); // floor(1.5), not round
    expect(estimateUsed(sliding(10), bucket(0, 10, 0))).toBe(10); // the whole previous bucket at the start
    expect(estimateUsed(sliding(10), bucket(4, 10, 0.75))).toBe(6); // 4 + floor(2.5)
    expect(estimateUsed(sliding(10), bucket(7, 0, 0.3))).toBe(7);
    expect(estimateUsed(sliding(10), bucket(2, 8, 1))).toBe(2); // the previous bucket has slid out
  });

  it('utc_day: only the current bucket counts, whatever the previous day held', () => {
    expect(estimateUsed(utcDay(10), bucket(5, 10, 0.25))).toBe(5);
    expect(estimateUsed(utcDay(10), bucket(0, 1_000_000, 0))).toBe(0);
  });
});

describe('quotaState', () => {
  it('sliding: used, remaining and seconds until the bucket ends', () => {
    expect(quotaState(sliding(10), bucket(4, 10, 0.5))).toEqual({
      name: 'requestsPerMinute',
      unit: 'requests',
      max: 10,
      used: 9,
      remaining: 1,
      resetSeconds: 30,
      windowSeconds: 60,
      window: 'sliding',
    });
  });

  it('remaining never goes below 0 when the estimate is over the limit', () => {
    const state = quotaState(sliding(10), bucket(8, 10, 0.1)); // 8 + 9 = 17
    expect(state.used).toBe(17);
    expect(state.remaining).toBe(0);
  });

  it('resetSeconds rounds up and is at least 1', () => {
    expect(quotaState(sliding(10), bucket(0, 0, 0.5 + 1 / 120)).resetSeconds).toBe(30); // 29.5 s left
    expect(quotaState(sliding(10), bucket(0, 0, 0.9999)).resetSeconds).toBe(1);
    expect(quotaState(sliding(10), bucket(0, 0, 1)).resetSeconds).toBe(1);
    expect(quotaState(sliding(10), bucket(0, 0, 0)).resetSeconds).toBe(60);
  });

  it('utc_day: resets at the end of the UTC day, counts only today', () => {
    const state = quotaState(utcDay(2), bucket(1, 50, 0.75));
    expect(state).toMatchObject({ used: 1, remaining: 1, resetSeconds: 21600, windowSeconds: 86400, window: 'utc_day', max: 2 });
  });

  it('max null (unlimited): remaining is null, used is still reported', () => {
    expect(quotaState(sliding(null), bucket(5, 10, 0.5))).toMatchObject({ max: null, used: 10, remaining: null });
    expect(quotaState(utcDay(null), bucket(3, 0, 0.5))).toMatchObject({ max: null, used: 3, remaining: null });
  });

  it('max 0: remaining is 0 from the start', () => {
    expect(quotaState(sliding(0), bucket(0, 0, 0.5))).toMatchObject({ max: 0, used: 0, remaining: 0 });
    expect(quotaState(utcDay(0), bucket(0, 0, 0.5))).toMatchObject({ max: 0, used: 0, remaining: 0 });
  });
});

describe('retryAfterSeconds', () => {
  it('sliding, current bucket full: the rest of this bucket plus enough of the next for it to slide out', () => {
    expect(retryAfterSeconds(sliding(10), bucket(10, 0, 0.5))).toBe(30); // next bucket: floor(10 * (1 - e)) < 10 at once
    expect(retryAfterSeconds(sliding(10), bucket(20, 0, 0.5))).toBe(60); // 30 s + half of the next bucket
    expect(retryAfterSeconds(sliding(3), bucket(3, 3, 0.75))).toBe(15);
  });

  it('sliding, room in this bucket once the previous one slides out far enough', () => {
    // max 10, 2 used now, 16 in the previous bucket: fits once 16 * (1 - e) < 8, i.e. e > 0.5.
    expect(retryAfterSeconds(sliding(10), bucket(2, 16, 0.25))).toBe(15);
    expect(retryAfterSeconds(sliding(10, 3600), bucket(2, 16, 0.25))).toBe(900);
  });

  it('utc_day: until midnight UTC, at least 1 s', () => {
    expect(retryAfterSeconds(utcDay(2), bucket(2, 0, 0.75))).toBe(21600);
    expect(retryAfterSeconds(utcDay(2), bucket(2, 100, 0.5))).toBe(43200);
    expect(retryAfterSeconds(utcDay(2), bucket(2, 0, 0.9999999))).toBe(1);
  });

  it('max 0: sliding waits out this bucket and a whole window; utc_day waits for midnight', () => {
    expect(retryAfterSeconds(sliding(0), bucket(0, 0, 0.5))).toBe(90);
    expect(retryAfterSeconds(utcDay(0), bucket(0, 0, 0.5))).toBe(43200);
  });

  it('max null: a finite, positive number', () => {
    expect(retryAfterSeconds(sliding(null), bucket(5, 0, 0.5))).toBe(30);
    expect(retryAfterSeconds(sliding(null), bucket(5, 7, 0.5))).toBe(1);
    expect(retryAfterSeconds(utcDay(null), bucket(5, 0, 0.5))).toBe(43200);
  });

  /** Would one more unit be allowed `seconds` from now (consumeQuota's rule), with no other traffic? */
  function fitsAfter(rule: LimitRule, state: Bucket, seconds: number): boolean {
    const max = rule.max!;
    let { used, previous, elapsed } = state;
    elapsed += seconds / rule.windowSeconds;
    while (elapsed >= 1) {
      [previous, used] = [used, 0];
      elapsed -= 1;
    }
    const carried = rule.window === 'sliding' ? Math.floor(previous * (1 - elapsed)) : 0;
    return used + 1 + carried <= max;
  }

  it('is long enough and not more than a second too long, over a grid of refused states', () => {
    let checked = 0;
    for (const rule of [sliding(1), sliding(3), sliding(10), sliding(10, 3600), utcDay(1), utcDay(2), utcDay(5)]) {
      for (let used = 0; used <= 12; used++) {
        for (const previous of [0, 1, 3, 9, 10, 11, 20]) {
          for (const elapsed of [0, 0.1, 0.37, 0.5, 0.9, 0.999]) {
            const state = bucket(used, previous, elapsed);
            if (fitsAfter(rule, state, 0)) continue; // allowed now: no Retry-After
            const retry = retryAfterSeconds(rule, state);
            const label = `${rule.window}/${rule.windowSeconds} max ${rule.max} ${JSON.stringify(state)} -> ${retry}`;
            expect(Number.isInteger(retry), label).toBe(true);
            expect(retry, label).toBeGreaterThanOrEqual(1);
            expect(fitsAfter(rule, state, retry + 0.01), `fits after Retry-After: ${label}`).toBe(true);
            if (retry > 1) expect(fitsAfter(rule, state, retry - 1.01), `does not fit a second earlier: ${label}`).toBe(false);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
  });
});

describe('describeReset', () => {
  it('is the ISO time the given seconds from now, without milliseconds', () => {
    expect(describeReset(90, Date.UTC(2024, 0, 1, 0, 0, 0, 500))).toBe('2024-01-01T00:01:30Z');
    expect(describeReset(1, Date.UTC(2024, 11, 31, 23, 59, 59))).toBe('2025-01-01T00:00:00Z');
  });
});
