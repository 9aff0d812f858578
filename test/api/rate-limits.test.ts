import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { anonymousSubject, type Caller, quotaSubject } from '../../api/http/guard.ts';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { connect, type Sql } from '../../core/db/database.ts';
import type { LimitRule, Tier } from '../../core/schemas.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import postgres from 'postgres';
import { consumeQuota, consumeQuotas } from '../../core/usage/consumeQuota.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { awaitFreshWindow, expectError, requestFrom, restoreTiers, snapshotTiers, type ApiResponse } from '../support/http-helpers.ts';

let db: TestDatabase;
let api: TestApi;
let defaults: Tier[];

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  defaults = await snapshotTiers(db.sql);
});
afterEach(async () => {
  await restoreTiers(db.sql, defaults);
});
afterAll(async () => {
  await api.close();
  await db.drop();
});

const counted = async (subject: string, limit = 'requestsPerMinute') =>
  (
    await db.sql<
      { used: number }[]
    >`select coalesce(sum(used), 0)::int as used from usage_counters where subject = ${subject} and limit_name = ${limit}`
  )[0]!.used;

function expectRateLimitHeaders(response: ApiResponse, max: number, remaining: number) {
  expect(response.headers.get('ratelimit-limit')).toBe(String(max));
  expect(response.headers.get('ratelimit-remaining')).toBe(String(remaining));
  expect(response.headers.get('ratelimit-policy')).toBe(`${max};w=60`);
  const reset = response.headers.get('ratelimit-reset');
  expect(reset).toMatch(/^\d+$/);
  expect(Number(reset)).toBeGreaterThanOrEqual(1);
}

const noRateLimitHeaders = (response: ApiResponse) =>
  ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'retry-after'].filter((name) =>
    response.headers.has(name),
  );

describe('RateLimit headers', () => {
  it('a keyed request carries RateLimit-Limit, -Remaining, -Reset and -Policy of requestsPerMinute', async () => {
    await awaitFreshWindow(db.sql);
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    const first = await api.call('/api/features', { key });
    expect(first.status).toBe(200);
    expectRateLimitHeaders(first, 600, 599);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    const second = await api.call('/api/tiers', { key });
    expect(second.status).toBe(200);
    expectRateLimitHeaders(second, 600, 598);
  });

  it("an anonymous request carries the anonymous tier's headers", async () => {
    await awaitFreshWindow(db.sql);
    const response = await requestFrom(`${api.url}/api/tiers`, { localAddress: '127.0.0.9' });
    expect(response.status).toBe(200);
    expectRateLimitHeaders(response, 30, 29);
  });

  it('a request refused after it was counted (400) still carries the headers', async () => {
    await awaitFreshWindow(db.sql);
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const response = await api.call('/api/tiers/pro', {
      method: 'PATCH',
      key,
      headers: { 'Content-Type': 'application/json' },
      body: '{"foo":1}',
    });
    expectError(response, 400, 'INVALID_INPUT');
    expectRateLimitHeaders(response, 600, 599);
  });
});

describe('requestsPerMinute', () => {
  it('the request after the limit is 429 RATE_LIMITED with Retry-After and a clear message', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 3 } });
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    for (const remaining of [2, 1, 0]) {
      const allowed = await api.call('/api/features', { key });
      expect(allowed.status).toBe(200);
      expectRateLimitHeaders(allowed, 3, remaining);
    }
    const refused = await api.call('/api/features', { key });
    const error = expectError(refused, 429, 'RATE_LIMITED');
    expect(error.message).toContain('Limit reached: 3 requests per minute (requestsPerMinute)');
    expect(error.message).toMatch(/resets at \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/);
    const retryAfter = refused.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(Number(retryAfter)).toBeLessThanOrEqual(120);
    expectRateLimitHeaders(refused, 3, 0);
    expect(refused.headers.get('ratelimit-reset')).toBe(retryAfter);
    expect(error.details).toEqual({ limit: 'requestsPerMinute', max: 3, retryAfterSeconds: Number(retryAfter) });
    expect(error.message).toContain(`(in ${retryAfter} s)`);

    // Refused requests are not counted: the counter stays at the limit.
    expectError(await api.call('/api/tiers', { key }), 429, 'RATE_LIMITED');
    expectError(await api.call('/api/features', { headers: { Authorization: `Bearer ${key}` } }), 429, 'RATE_LIMITED');
    expect(await counted(user.id)).toBe(3);
    const { rows } = (
      await db.sql<
        { rows: number }[]
      >`select count(*)::int as rows from usage_counters where subject = ${user.id} and limit_name = 'requestsPerMinute'`
    )[0]!;
    expect(rows).toBe(1);
  });

  it('raising the limit lets the same caller through again at once', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 1 } });
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    expect((await api.call('/api/features', { key })).status).toBe(200);
    expectError(await api.call('/api/features', { key }), 429, 'RATE_LIMITED');
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 2 } });
    const again = await api.call('/api/features', { key });
    expect(again.status).toBe(200);
    expectRateLimitHeaders(again, 2, 0);
  });

  it('the limit is per user: another user of the same tier is not affected', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 1 } });
    const first = await createKeyedUser(db.sql, { tier: 'pro' });
    const second = await createKeyedUser(db.sql, { tier: 'pro' });
    expect((await api.call('/api/features', { key: first.key })).status).toBe(200);
    expectError(await api.call('/api/features', { key: first.key }), 429, 'RATE_LIMITED');
    expect((await api.call('/api/features', { key: second.key })).status).toBe(200);
  });

  it('a regenerated key keeps counting against the same user', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 2 } });
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    expect((await api.call('/api/features', { key })).status).toBe(200);
    expect((await api.call('/api/features', { key })).status).toBe(200);
    const regenerated = await createApiKey(db.sql, { userId: user.id });
    expectError(await api.call('/api/features', { key: regenerated.key }), 429, 'RATE_LIMITED');
  });

  it('a limit of 0 refuses every request, with a message saying the tier allows none', async () => {
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 0 } });
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    const refused = await api.call('/api/features', { key });
    const error = expectError(refused, 429, 'RATE_LIMITED');
    expect(error.message).toContain('Limit reached: the Pro tier allows no requests (requestsPerMinute)');
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expectRateLimitHeaders(refused, 0, 0);
    expect(refused.headers.get('ratelimit-policy')).toBe('0;w=60');
    expect(await counted(user.id)).toBe(0);
  });

  it('max null (unlimited) sends no RateLimit headers and never 429', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 3 } });
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    for (let i = 0; i < 3; i++) expect((await api.call('/api/features', { key })).status).toBe(200);
    expectError(await api.call('/api/features', { key }), 429, 'RATE_LIMITED');
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: null } });
    for (let i = 0; i < 5; i++) {
      const response = await api.call('/api/features', { key });
      expect(response.status).toBe(200);
      expect(noRateLimitHeaders(response)).toEqual([]);
      expect(response.body.data.limits.requestsPerMinute.max).toBeNull();
      expect(response.body.data.limits.requestsPerMinute.remaining).toBeNull();
    }
  });
});

describe('limits hold across API processes sharing one database', () => {
  let second: TestApi;
  let secondSql: Sql;

  beforeAll(async () => {
    secondSql = connect(db.url, { max: 10, role: 'test-second-api' });
    second = await startTestApi(secondSql);
  });
  afterAll(async () => {
    await second.close();
    await secondSql.end({ timeout: 5 });
  });

  it('concurrent requests spread over two processes: exactly max succeed in total', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 7 } });
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? second : api).call('/api/features', { key })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(7);
    expect(statuses.filter((status) => status === 429)).toHaveLength(17);
    for (const response of responses.filter((r) => r.status === 429)) expectError(response, 429, 'RATE_LIMITED');
    const remainings = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('ratelimit-remaining')))
      .sort((a, b) => a - b);
    expect(remainings).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await counted(user.id)).toBe(7);
  });

  it('sequential requests alternating between the processes share one counter', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 4 } });
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? second : api).call('/api/features', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });
});

describe('anonymous callers', () => {
  it('are counted per client address against the anonymous tier', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 2 } });
    const from = (localAddress: string, headers?: Record<string, string>) =>
      requestFrom(`${api.url}/api/features`, { localAddress, headers });
    const first = await from('127.0.0.2');
    expect(first.status).toBe(200);
    expect(first.body.data.tier.name).toBe('anonymous');
    expect(first.body.data.account).toBeNull();
    expect(first.body.data.limits.requestsPerMinute).toMatchObject({ max: 2, used: 1, remaining: 1 });
    expectRateLimitHeaders(first, 2, 1);
    expect((await from('127.0.0.2')).status).toBe(200);
    const refused = await from('127.0.0.2');
    expectError(refused, 429, 'RATE_LIMITED');
    expect(refused.body.error.message).toContain('Limit reached: 2 requests per minute (requestsPerMinute)');
    // Another address has its own counter.
    const other = await from('127.0.0.3');
    expect(other.status).toBe(200);
    expect(other.body.data.limits.requestsPerMinute.used).toBe(1);
    // Without TRUST_PROXY, X-Forwarded-For cannot be used to dodge the limit.
    expectError(await from('127.0.0.2', { 'X-Forwarded-For': '203.0.113.7' }), 429, 'RATE_LIMITED');
    expect(await counted(anonymousSubject('127.0.0.2'))).toBe(2);
    expect(await counted(anonymousSubject('127.0.0.3'))).toBe(1);
    expect(await counted(anonymousSubject('203.0.113.7'))).toBe(0);
  });

  it('with TRUST_PROXY, the first X-Forwarded-For address is the client', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 1 } });
    const proxied = await startTestApi(db.sql, { TRUST_PROXY: 'true' });
    try {
      const from = (forwarded: string) => proxied.call('/api/features', { headers: { 'X-Forwarded-For': forwarded } });
      expect((await from('198.51.100.1, 10.0.0.1')).status).toBe(200);
      expectError(await from('198.51.100.1'), 429, 'RATE_LIMITED');
      expect((await from('198.51.100.2, 198.51.100.1')).status).toBe(200);
      expect(await counted(anonymousSubject('198.51.100.1'))).toBe(1);
      expect(await counted(anonymousSubject('198.51.100.2'))).toBe(1);
    } finally {
      await proxied.close();
    }
  });

  it('a key-holder is not limited by the anonymous tier', async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 0 } });
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    const keyed = await requestFrom(`${api.url}/api/features`, { localAddress: '127.0.0.4', headers: { 'X-API-Key': key } });
    expect(keyed.status).toBe(200);
    expectError(await requestFrom(`${api.url}/api/features`, { localAddress: '127.0.0.4' }), 429, 'RATE_LIMITED');
  });
});

describe('routes outside the rate limit', () => {
  it('/api/health is never rate-limited, for anonymous callers or keys', async () => {
    await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 0 } });
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 0 } });
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    expectError(await api.call('/api/features', { key }), 429, 'RATE_LIMITED');
    expectError(await requestFrom(`${api.url}/api/features`, { localAddress: '127.0.0.5' }), 429, 'RATE_LIMITED');
    for (const response of [
      await api.call('/api/health'),
      await api.call('/api/health', { key }),
      await requestFrom(`${api.url}/api/health`, { localAddress: '127.0.0.5' }),
    ]) {
      expect(response.status).toBe(200);
      expect(noRateLimitHeaders(response)).toEqual([]);
    }
    expect(await counted(user.id)).toBe(0);
    expect(await counted(anonymousSubject('127.0.0.5'))).toBe(0);
  });
});

/** A limit of 20 requests an hour per user, with `overrides`. */
const rule = (overrides: Partial<LimitRule> = {}): LimitRule => ({
  name: 'requestsPerMinute',
  description: 'test',
  unit: 'requests',
  window: 'sliding',
  windowSeconds: 3600,
  countedPer: 'user',
  max: 20,
  ...overrides,
});

describe('consumeQuota', () => {
  it('50 concurrent calls with max 20 allow exactly 20', async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const subject = randomUUID();
    const limit = rule({ max: 20 });
    const decisions = await Promise.all(Array.from({ length: 50 }, () => consumeQuota(db.sql, subject, limit)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
    expect(decisions.filter((decision) => !decision.allowed)).toHaveLength(30);
    for (const decision of decisions.filter((d) => !d.allowed)) {
      expect(decision.remaining).toBe(0);
      expect(decision.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.used)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await counted(subject)).toBe(20);
  });

  it('50 concurrent calls from two connection pools with max 20 allow exactly 20', async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const other = connect(db.url, { max: 10, role: 'test-other-pool' });
    try {
      const subject = randomUUID();
      const limit = rule({ max: 20 });
      const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => consumeQuota(i % 2 ? other : db.sql, subject, limit)));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
      expect(await counted(subject)).toBe(20);
    } finally {
      await other.end({ timeout: 5 });
    }
  });

  it('a sliding window counts the previous bucket (a huge previous bucket refuses the next unit)', async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const subject = randomUUID();
    await db.sql`
      insert into usage_counters (subject, limit_name, window_start, used)
      values (${subject}, 'requestsPerMinute', to_timestamp(floor(extract(epoch from now()) / 3600) * 3600 - 3600), 1000000)`;
    const sliding = await consumeQuota(db.sql, subject, rule({ max: 10 }));
    expect(sliding.allowed).toBe(false);
    expect(sliding.remaining).toBe(0);
    expect(await counted(subject)).toBe(1000000);
  });

  it('a utc_day rule (apiStenogramsPerDay, per key) counts per subject, in a bucket starting at midnight UTC', async () => {
    await awaitFreshWindow(db.sql, 86400, 5);
    const stenograms = rule({
      name: 'apiStenogramsPerDay',
      window: 'utc_day',
      windowSeconds: 86400,
      countedPer: 'key',
      max: 2,
      unit: 'stenogram generations',
    });
    const keyA = randomUUID();
    const keyB = randomUUID();
    const a1 = await consumeQuota(db.sql, keyA, stenograms);
    const a2 = await consumeQuota(db.sql, keyA, stenograms);
    const a3 = await consumeQuota(db.sql, keyA, stenograms);
    expect([a1.allowed, a2.allowed, a3.allowed]).toEqual([true, true, false]);
    expect([a1.remaining, a2.remaining, a3.remaining]).toEqual([1, 0, 0]);
    expect(a3.retryAfterSeconds).toBe(a3.resetSeconds);
    expect(a3.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(a3.retryAfterSeconds).toBeLessThanOrEqual(86400);
    const b1 = await consumeQuota(db.sql, keyB, stenograms);
    expect(b1).toMatchObject({ allowed: true, used: 1, remaining: 1 });
    expect(await counted(keyA, 'apiStenogramsPerDay')).toBe(2);
    expect(await counted(keyB, 'apiStenogramsPerDay')).toBe(1);
    const { midnight } = (
      await db.sql<{ midnight: boolean }[]>`
      select bool_and(window_start = date_trunc('day', now() at time zone 'utc') at time zone 'utc') as midnight
      from usage_counters where subject in (${keyA}, ${keyB})`
    )[0]!;
    expect(midnight).toBe(true);

    // A huge previous day does not carry into a utc_day bucket.
    const keyC = randomUUID();
    await db.sql`
      insert into usage_counters (subject, limit_name, window_start, used)
      values (${keyC}, 'apiStenogramsPerDay', date_trunc('day', now() at time zone 'utc') at time zone 'utc' - interval '1 day', 1000000)`;
    expect((await consumeQuota(db.sql, keyC, stenograms)).allowed).toBe(true);
  });

  it('per-key limits are charged to the key, per-user limits to the user', async () => {
    await awaitFreshWindow(db.sql);
    const { key, keyId, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    const features = await api.call('/api/features', { key });
    const tier = defaults.find((entry) => entry.name === 'pro')!;
    const caller: Caller = { kind: 'key', tier, subject: user.id, userId: user.id, email: user.email, isAdmin: false, keyId, scope: 4 };
    expect(quotaSubject(caller, tier.limits.apiStenogramsPerDay)).toBe(keyId);
    expect(quotaSubject(caller, tier.limits.requestsPerMinute)).toBe(user.id);
    expect(features.body.data.limits.apiStenogramsPerDay).toMatchObject({ countedPer: 'key', window: 'utc_day', used: 0, max: 10 });

    await consumeQuota(db.sql, keyId, tier.limits.apiStenogramsPerDay);
    await consumeQuota(db.sql, keyId, tier.limits.apiStenogramsPerDay);
    const after = await api.call('/api/features', { key });
    expect(after.body.data.limits.apiStenogramsPerDay).toMatchObject({ used: 2, remaining: 8 });

    // A regenerated key starts its per-key count afresh, while the per-user count carries over.
    const regenerated = await createApiKey(db.sql, { userId: user.id });
    const fresh = await api.call('/api/features', { key: regenerated.key });
    expect(fresh.body.data.limits.apiStenogramsPerDay).toMatchObject({ used: 0, remaining: 10 });
    expect(fresh.body.data.limits.requestsPerMinute.used).toBe(3);
  });
});

describe('consumeQuotas (several limits, one statement)', () => {
  const requests = rule();
  const queries: LimitRule = { ...requests, name: 'ftsQueriesPerMinute', unit: 'queries', max: 10 };

  it("counts every limit in a single statement, with each one's decision", async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const texts: string[] = [];
    const url = new URL(db.url);
    const host = url.searchParams.get('host');
    url.searchParams.delete('host');
    const recording = postgres(url.toString(), {
      ...(host ? { host } : {}),
      max: 1,
      onnotice: () => undefined,
      debug: (_connection, text) => void texts.push(text),
    });
    try {
      await recording`select 1`; // the connection's own start-up queries (types) are not the call's
      texts.length = 0;
      const subject = randomUUID();
      const decisions = await consumeQuotas(recording, [
        { subject, rule: requests },
        { subject, rule: queries, units: 3 },
      ]);
      expect(texts).toHaveLength(1);
      expect(decisions).toMatchObject([
        { allowed: true, name: 'requestsPerMinute', used: 1, remaining: 19 },
        { allowed: true, name: 'ftsQueriesPerMinute', used: 3, remaining: 7 },
      ]);
      expect(await counted(subject)).toBe(1);
      expect(await counted(subject, 'ftsQueriesPerMinute')).toBe(3);
    } finally {
      await recording.end({ timeout: 5 });
    }
  });

  it('a refused limit stops the rest: nothing of it or after it is counted; the ones before it are', async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const subject = randomUUID();
    const refusedFirst = await consumeQuotas(db.sql, [
      { subject, rule: { ...requests, max: 0 } },
      { subject, rule: queries },
    ]);
    expect(refusedFirst).toHaveLength(1);
    expect(refusedFirst[0]).toMatchObject({ allowed: false, name: 'requestsPerMinute', remaining: 0 });
    expect(refusedFirst[0]!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect([await counted(subject), await counted(subject, 'ftsQueriesPerMinute')]).toEqual([0, 0]);

    const refusedSecond = await consumeQuotas(db.sql, [
      { subject, rule: requests },
      { subject, rule: queries, units: 11 },
    ]);
    expect(refusedSecond.map((decision) => decision.allowed)).toEqual([true, false]);
    expect(refusedSecond[1]).toMatchObject({ name: 'ftsQueriesPerMinute', used: 0, remaining: 10 });
    expect([await counted(subject), await counted(subject, 'ftsQueriesPerMinute')]).toEqual([1, 0]);
  });

  it('limits per subject: a per-key limit and a per-user one in the same statement', async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const [user, key] = [randomUUID(), randomUUID()];
    await consumeQuotas(db.sql, [
      { subject: user, rule: requests },
      { subject: key, rule: { ...queries, countedPer: 'key' } },
    ]);
    expect([await counted(user), await counted(key, 'ftsQueriesPerMinute'), await counted(user, 'ftsQueriesPerMinute')]).toEqual([1, 1, 0]);
  });

  it('40 concurrent calls: the first limit takes exactly its max, the second exactly its own among those', async () => {
    await awaitFreshWindow(db.sql, 3600, 5);
    const subject = randomUUID();
    const decisions = await Promise.all(
      Array.from({ length: 40 }, () =>
        consumeQuotas(db.sql, [
          { subject, rule: requests },
          { subject, rule: queries },
        ]),
      ),
    );
    expect(decisions.filter((pair) => pair[0]!.allowed)).toHaveLength(20);
    expect(decisions.filter((pair) => pair[1]?.allowed)).toHaveLength(10);
    expect(decisions.filter((pair) => pair.length === 2 && !pair[1]!.allowed)).toHaveLength(10);
    expect([await counted(subject), await counted(subject, 'ftsQueriesPerMinute')]).toEqual([20, 10]);
  });
});

describe('a route charging a limit of its own counts the request with it (GET /api/fts)', () => {
  const fts = (key: string, query = 'q=lathe') => api.call(`/api/fts?${query}`, { key });
  /** A Pro key with these two limits, at the start of a fresh window. */
  const keyWith = async (requestsPerMinute: number, ftsQueriesPerMinute: number) => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute, ftsQueriesPerMinute } });
    return createKeyedUser(db.sql, { tier: 'pro' });
  };
  /** What the user's requestsPerMinute and ftsQueriesPerMinute counters hold. */
  const bothCounted = async (userId: string) => [await counted(userId), await counted(userId, 'ftsQueriesPerMinute')];

  it('both counted on success, with the RateLimit headers of ftsQueriesPerMinute', async () => {
    const { key, user } = await keyWith(5, 3);
    const response = await fts(key);
    expect(response.status).toBe(200);
    expectRateLimitHeaders(response, 3, 2);
    expect(await bothCounted(user.id)).toEqual([1, 1]);
  });

  it('requestsPerMinute used up: 429 of requestsPerMinute, and no full-text query counted', async () => {
    const { key, user } = await keyWith(1, 3);
    expect((await fts(key)).status).toBe(200);
    const refused = await fts(key);
    const error = expectError(refused, 429, 'RATE_LIMITED');
    expect(error.details).toMatchObject({ limit: 'requestsPerMinute', max: 1 });
    expectRateLimitHeaders(refused, 1, 0);
    expect(await bothCounted(user.id)).toEqual([1, 1]);
    // Refused before validation, as before: a bad query is still a 429.
    expectError(await fts(key, 'q=lathe&page=300'), 429, 'RATE_LIMITED');
    expectError(await fts(key, 'q='), 429, 'RATE_LIMITED');
  });

  it('ftsQueriesPerMinute used up: 429 of ftsQueriesPerMinute; the request itself is counted', async () => {
    const { key, user } = await keyWith(10, 1);
    expect((await fts(key)).status).toBe(200);
    const refused = await fts(key, 'q=bread');
    const error = expectError(refused, 429, 'RATE_LIMITED');
    expect(error.details).toMatchObject({ limit: 'ftsQueriesPerMinute', max: 1 });
    expect(error.message).toContain('1 full-text queries per minute (ftsQueriesPerMinute)');
    expectRateLimitHeaders(refused, 1, 0);
    expect(await bothCounted(user.id)).toEqual([2, 1]);
  });

  it("a request refused before the search (400) counts as a request, not as a query, with requestsPerMinute's headers", async () => {
    const { key, user } = await keyWith(5, 3);
    const pastWindow = await fts(key, 'q=lathe&page=300');
    expectError(pastWindow, 400, 'INVALID_INPUT');
    expectRateLimitHeaders(pastWindow, 5, 4);
    expectError(await fts(key, 'q='), 400, 'INVALID_INPUT');
    expect(await bothCounted(user.id)).toEqual([2, 0]);
  });
});
