import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { listApiKeys } from '../../core/accounts/listApiKeys.ts';
import { revokeApiKey } from '../../core/accounts/revokeApiKey.ts';
import { AppError } from '../../core/errors.ts';
import { generateApiKey, hashApiKey } from '../../core/keys.ts';
import type { Tier } from '../../core/schemas.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError, restoreTiers, snapshotTiers, startApiServer } from '../support/http-helpers.ts';

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

/** A route that needs API access and answers 404 for a video that is not stored. */
const dataRoute = '/api/videos/dQw4w9WgXcQ/status-history';
const json = (body: unknown) => ({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const patchTier = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  api.call(`/api/tiers/${name}`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('where the key is read from', () => {
  it('accepts the key in X-API-Key', async () => {
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    const response = await api.call('/api/features', { headers: { 'X-API-Key': key } });
    expect(response.status).toBe(200);
    expect(response.body.data.tier.name).toBe('pro');
    expect(response.body.data.account.userId).toBe(user.id);
  });

  it('accepts the key in Authorization: Bearer', async () => {
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    const response = await api.call('/api/features', { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(response.body.data.account.userId).toBe(user.id);
  });

  it('a Bearer key on a key-only route passes authentication', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const response = await patchTier('pro', {}, { Authorization: `Bearer ${key}` });
    expect(response.status).toBe(200);
    expect(response.body.data.name).toBe('pro');
  });

  it('refuses X-API-Key and Authorization: Bearer naming different keys with 400 INVALID_INPUT, on every kind of route; the same key in both passes', async () => {
    const first = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const second = await createKeyedUser(db.sql, { tier: 'pro' });
    const both = (bearer: string) => ({ 'X-API-Key': first.key, Authorization: `Bearer ${bearer}` });
    for (const response of [
      await api.call('/api/features', { headers: both(second.key) }),
      await api.call(dataRoute, { headers: both(second.key) }),
      await patchTier('pro', {}, both(second.key)),
      await api.call('/api/health', { headers: both(second.key) }),
    ]) {
      expectError(response, 400, 'INVALID_INPUT');
      expect(response.body.error.message).toMatch(/X-API-Key and Authorization: Bearer name different API keys; send one key/);
    }
    const same = await api.call('/api/features', { headers: both(first.key) });
    expect(same.status).toBe(200);
    expect(same.body.data.account.userId).toBe(first.user.id);
    expect((await patchTier('pro', {}, both(first.key))).status).toBe(200);
  });

  it('refuses a non-Bearer Authorization scheme with 401 UNAUTHORIZED', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    expectError(
      await api.call('/api/features', { headers: { Authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` } }),
      401,
      'UNAUTHORIZED',
    );
    expectError(await api.call('/api/features', { headers: { Authorization: `Token ${key}` } }), 401, 'UNAUTHORIZED');
    expectError(await api.call('/api/tiers/pro', { method: 'PATCH', headers: { Authorization: `Basic ${key}` } }), 401, 'UNAUTHORIZED');
  });
});

describe('missing and bad keys', () => {
  it('a key-only route without a key answers 401 API_KEY_REQUIRED', async () => {
    expectError(await api.call('/api/tiers/pro', { method: 'PATCH', ...json({}) }), 401, 'API_KEY_REQUIRED');
  });

  it('an optional-auth route without a key answers as the anonymous tier', async () => {
    const response = await api.call('/api/features');
    expect(response.status).toBe(200);
    expect(response.body.data.tier.name).toBe('anonymous');
    expect(response.body.data.account).toBeNull();
  });

  it('a malformed key is 401 UNAUTHORIZED, on optional and key-only routes', async () => {
    for (const bad of ['nope', 'tsk_short', `tsk_${'a'.repeat(47)}!`, `TSK_${'a'.repeat(48)}`, `tsk_${'a'.repeat(49)}`]) {
      expectError(await api.call('/api/features', { key: bad }), 401, 'UNAUTHORIZED');
    }
    expectError(await patchTier('pro', {}, { 'X-API-Key': 'tsk_short' }), 401, 'UNAUTHORIZED');
    expectError(await api.call('/api/features', { headers: { Authorization: 'Bearer not-a-key' } }), 401, 'UNAUTHORIZED');
  });

  it('an unknown well-formed key is 401 UNAUTHORIZED', async () => {
    expectError(await api.call('/api/features', { key: generateApiKey() }), 401, 'UNAUTHORIZED');
    expectError(await patchTier('pro', {}, { Authorization: `Bearer ${generateApiKey()}` }), 401, 'UNAUTHORIZED');
  });

  it('a revoked key is 401 UNAUTHORIZED', async () => {
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    expect((await api.call('/api/features', { key })).status).toBe(200);
    await revokeApiKey(db.sql, user.id);
    expectError(await api.call('/api/features', { key }), 401, 'UNAUTHORIZED');
    expectError(await api.call('/api/features', { headers: { Authorization: `Bearer ${key}` } }), 401, 'UNAUTHORIZED');
  });

  it.each(['registered', 'plus'] as const)('a key of a %s account (no API access) is 403 FORBIDDEN on the data routes', async (tier) => {
    const { key } = await createKeyedUser(db.sql, { tier });
    expectError(await api.call(dataRoute, { key }), 403, 'FORBIDDEN');
    expectError(await api.call(dataRoute, { headers: { Authorization: `Bearer ${key}` } }), 403, 'FORBIDDEN');
  });

  it.each(['registered', 'plus'] as const)(
    'a key of a %s account (no API access) reads its own tier, account and usage at /api/features',
    async (tier) => {
      const { key, user } = await createKeyedUser(db.sql, { tier });
      for (const response of [
        await api.call('/api/features', { key }),
        await api.call('/api/features', { headers: { Authorization: `Bearer ${key}` } }),
      ]) {
        expect(response.status).toBe(200);
        expect(response.body.data.tier.name).toBe(tier);
        expect(response.body.data.features.apiAccess).toBe(false);
        expect(response.body.data.account.email).toBe(user.email);
        expect(response.body.data.limits.requestsPerMinute.used).toBeGreaterThan(0);
      }
    },
  );

  it('API access follows the tier: granting it to plus lets plus keys in, taking it from pro locks pro keys out', async () => {
    const plus = await createKeyedUser(db.sql, { tier: 'plus' });
    const pro = await createKeyedUser(db.sql, { tier: 'pro' });
    await updateTier(db.sql, 'plus', { apiAccess: true });
    await updateTier(db.sql, 'pro', { apiAccess: false });
    expectError(await api.call(dataRoute, { key: plus.key }), 404, 'NOT_FOUND');
    expectError(await api.call(dataRoute, { key: pro.key }), 403, 'FORBIDDEN');
    expect((await api.call('/api/features', { key: pro.key })).body.data.tier.name).toBe('pro');
  });
});

describe('key regeneration', () => {
  it('a new key for the same user makes the old one 401 at once, and the new one works', async () => {
    const { key: oldKey, user } = await createKeyedUser(db.sql, { tier: 'pro' });
    expect((await api.call('/api/features', { key: oldKey })).status).toBe(200);
    const created = await createApiKey(db.sql, { userId: user.id });
    expect(created.key).not.toBe(oldKey);
    expect(created.revokedKeyId).not.toBeNull();
    expectError(await api.call('/api/features', { key: oldKey }), 401, 'UNAUTHORIZED');
    const fresh = await api.call('/api/features', { key: created.key });
    expect(fresh.status).toBe(200);
    expect(fresh.body.data.account.userId).toBe(user.id);
    const { active } = (
      await db.sql<{ active: number }[]>`select count(*)::int as active from api_keys where user_id = ${user.id} and revoked_at is null`
    )[0]!;
    expect(active).toBe(1);
  });

  it('keys made at once for one user all succeed: each revokes the one before, however their transactions began', async () => {
    const { user } = await createKeyedUser(db.sql, { tier: 'pro' });
    // A transaction that waited for the user's lock began before the key it revokes was made.
    for (let round = 0; round < 20; round++) await Promise.all(Array.from({ length: 4 }, () => createApiKey(db.sql, { userId: user.id })));
    expect(await db.sql`select 1 from api_keys where user_id = ${user.id} and revoked_at is null`).toHaveLength(1);
  });
});

describe('key scope', () => {
  it('createApiKey refuses a scope above the tier maximum (plus allows L2) with INVALID_INPUT', async () => {
    const user = await createUser(db.sql, { email: `plus-scope-${Date.now()}@example.org`, tier: 'plus', isAdmin: false });
    for (const scope of ['L3', 'L4'] as const) {
      const error = await createApiKey(db.sql, { userId: user.id, scope }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('INVALID_INPUT');
    }
    const { keys } = (await db.sql<{ keys: number }[]>`select count(*)::int as keys from api_keys where user_id = ${user.id}`)[0]!;
    expect(keys).toBe(0);
    const allowed = await createApiKey(db.sql, { userId: user.id, scope: 'L2' });
    expect(allowed.scope).toBe('L2');
    const defaulted = await createApiKey(db.sql, { userId: user.id });
    expect(defaulted.scope).toBe('L2');
  });

  it('the database refuses a direct insert of a key above the tier maximum (trigger, check_violation)', async () => {
    const user = await createUser(db.sql, { email: `plus-trigger-${Date.now()}@example.org`, tier: 'plus', isAdmin: false });
    const insert = (scope: number) => {
      const key = generateApiKey();
      return db.sql`insert into api_keys (user_id, key_hash, key_prefix, scope) values (${user.id}, ${hashApiKey(key)}, ${key.slice(0, 10)}, ${scope})`;
    };
    const error = (await insert(3).catch((caught: unknown) => caught)) as { code?: string; constraint_name?: string };
    expect(error.code).toBe('23514');
    expect(error.constraint_name).toBe('api_keys_scope_within_tier');
    // The same insert within the tier's maximum goes through: it was the scope that was refused.
    await expect(insert(2)).resolves.toBeDefined();
    // Raising an existing key's scope past the maximum is refused too.
    const raised = (await db.sql`update api_keys set scope = 4 where user_id = ${user.id}`.catch((caught: unknown) => caught)) as {
      code?: string;
    };
    expect(raised.code).toBe('23514');
  });

  it("the effective scope is capped by the tier's current maximum", async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    expect((await api.call('/api/features', { key })).body.data.account.keyScope).toBe('L4');
    await updateTier(db.sql, 'pro', { maxKeyScope: 'L2' });
    const lowered = await api.call('/api/features', { key });
    expect(lowered.status).toBe(200);
    expect(lowered.body.data.account.keyScope).toBe('L2');
    // The capped key has lost the L4 it needs for administration.
    expectError(await patchTier('pro', {}, { 'X-API-Key': key }), 403, 'FORBIDDEN');
    await updateTier(db.sql, 'pro', { maxKeyScope: 'L4' });
    expect((await api.call('/api/features', { key })).body.data.account.keyScope).toBe('L4');
    expect((await patchTier('pro', {}, { 'X-API-Key': key })).status).toBe(200);
  });
});

describe('key use', () => {
  it('keys list shows the second of the last use as soon as the answer is out, uses a second apart included', async () => {
    const { user, key, keyId } = await createKeyedUser(db.sql, { tier: 'pro' });
    const lastUsed = async () => (await listApiKeys(db.sql, { includeRevoked: false, userId: user.id }))[0]!.lastUsedAt;
    const dbSecond = async () => (await db.sql<{ at: Date }[]>`select date_trunc('second', clock_timestamp()) as at`)[0]!.at.getTime();
    expect(await lastUsed()).toBeNull();

    const before = await dbSecond();
    expect((await api.call('/api/features', { key })).status).toBe(200);
    const first = Date.parse((await lastUsed())!);
    expect(first).toBeGreaterThanOrEqual(before);
    expect(first).toBeLessThanOrEqual(await dbSecond());

    // As if that use had been half a minute ago; the next use, in a later second, is the last use.
    await db.sql`update api_keys set last_used_at = last_used_at - interval '30 seconds' where id = ${keyId}`;
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const beforeSecond = await dbSecond();
    expect((await api.call('/api/features', { key })).status).toBe(200);
    expect(Date.parse((await lastUsed())!)).toBeGreaterThanOrEqual(beforeSecond);
  });
});

describe('key storage', () => {
  it('stores only the SHA-256 hash: no column of api_keys holds the key', async () => {
    const { key, keyId } = await createKeyedUser(db.sql, { tier: 'pro' });
    const columns = await db.sql<{ column_name: string; data_type: string }[]>`
      select column_name, data_type from information_schema.columns where table_schema = 'public' and table_name = 'api_keys'`;
    expect(columns.map((column) => column.column_name).sort()).toEqual([
      'created_at',
      'id',
      'key_hash',
      'key_prefix',
      'last_used_at',
      'revoked_at',
      'scope',
      'user_id',
    ]);
    const [row] = await db.sql<{ keyHash: Buffer; keyPrefix: string; asText: string }[]>`
      select key_hash as "keyHash", key_prefix as "keyPrefix", row_to_json(k)::text as "asText" from api_keys k where id = ${keyId}`;
    expect(Buffer.from(row!.keyHash).equals(hashApiKey(key))).toBe(true);
    expect(row!.keyHash.length).toBe(32);
    expect(row!.keyPrefix).toBe(key.slice(0, 10));
    const secret = key.slice(10);
    expect(row!.asText).not.toContain(secret);
    expect(row!.asText.toLowerCase()).not.toContain(secret.toLowerCase());
    expect(row!.asText).not.toContain(Buffer.from(key).toString('hex'));
    expect(row!.asText).not.toContain(Buffer.from(key).toString('base64'));
    // Nor anywhere else in the schema: no table holds the key's secret part as text.
    const { found } = (
      await db.sql<{ found: number }[]>`
      select count(*)::int as found from (
        select row_to_json(u)::text as t from users u
        union all select row_to_json(k)::text from api_keys k
        union all select row_to_json(c)::text from usage_counters c
      ) rows where t like ${`%${secret}%`}`
    )[0]!;
    expect(found).toBe(0);
  });
});

describe('administrator-only route PATCH /api/tiers/:name', () => {
  it('a non-admin pro key with L4 is 403 FORBIDDEN', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: false, scope: 'L4' });
    expectError(await patchTier('pro', { limits: { requestsPerMinute: 5 } }, { 'X-API-Key': key }), 403, 'FORBIDDEN');
    const { max } = (
      await db.sql<{ max: number }[]>`select max_count as max from tier_limits where tier = 'pro' and limit_name = 'requestsPerMinute'`
    )[0]!;
    expect(max).toBe(600);
  });

  it('an admin key below L4 is 403 FORBIDDEN', async () => {
    for (const scope of ['L1', 'L2', 'L3'] as const) {
      const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope });
      expectError(await patchTier('pro', { limits: { requestsPerMinute: 5 } }, { 'X-API-Key': key }), 403, 'FORBIDDEN');
    }
    const { max } = (
      await db.sql<{ max: number }[]>`select max_count as max from tier_limits where tier = 'pro' and limit_name = 'requestsPerMinute'`
    )[0]!;
    expect(max).toBe(600);
  });

  it('an admin L4 key changes the tier, gets it back, and GET /api/tiers shows the change', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const response = await patchTier(
      'plus',
      { apiAccess: true, maxKeyScope: 'L1', features: { stenograms: false }, limits: { requestsPerMinute: 77, apiStenogramsPerDay: null } },
      { 'X-API-Key': key },
    );
    expect(response.status).toBe(200);
    const updated = response.body.data;
    expect(updated.name).toBe('plus');
    expect(updated.apiAccess).toBe(true);
    expect(updated.maxKeyScope).toBe('L1');
    expect(updated.features.stenograms).toBe(false);
    expect(updated.features.summaries).toBe(true);
    expect(updated.limits.requestsPerMinute.max).toBe(77);
    expect(updated.limits.apiStenogramsPerDay.max).toBeNull();
    expect(updated.limits.channelSearchesPerHour.max).toBe(20);

    const listed = await api.call('/api/tiers');
    expect(listed.status).toBe(200);
    const plus = listed.body.data.tiers.find((tier: { name: string }) => tier.name === 'plus');
    expect(plus).toEqual(updated);
  });

  it('the change shows at once in GET /api/tiers of the same process, even with a long-lived tier cache', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const server = await startApiServer(db.sql, { tiers: cachedTiers(db.sql, 60_000) });
    const base = server.url;
    try {
      const registered = async () =>
        ((await (await fetch(`${base}/api/tiers`)).json()) as { data: { tiers: Tier[] } }).data.tiers.find(
          (tier) => tier.name === 'registered',
        )!;
      expect((await registered()).limits.requestsPerMinute.max).toBe(60);
      const patched = await fetch(`${base}/api/tiers/registered`, {
        method: 'PATCH',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ limits: { requestsPerMinute: 61 } }),
      });
      expect(patched.status).toBe(200);
      expect((await registered()).limits.requestsPerMinute.max).toBe(61);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['an unknown field', { foo: 1 }, 'foo'],
    ['an unknown nested limit', { limits: { requestsPerFortnight: 3 } }, 'limits'],
    ['a wrong type', { limits: { requestsPerMinute: 'x' } }, 'limits.requestsPerMinute'],
    ['a negative number', { limits: { requestsPerMinute: -1 } }, 'limits.requestsPerMinute'],
    ['a fraction', { limits: { requestsPerMinute: 1.5 } }, 'limits.requestsPerMinute'],
    ['a bad scope', { maxKeyScope: 'L9' }, 'maxKeyScope'],
    ['a non-boolean flag', { features: { stenograms: 'yes' } }, 'features.stenograms'],
    ['a body that is not an object', [1, 2], 'body'],
  ])('%s in the body is 400 INVALID_INPUT naming the field', async (_label, body, field) => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const error = expectError(await patchTier('pro', body, { 'X-API-Key': key }), 400, 'INVALID_INPUT');
    expect(error.message).toContain(field);
    const { max } = (
      await db.sql<{ max: number }[]>`select max_count as max from tier_limits where tier = 'pro' and limit_name = 'requestsPerMinute'`
    )[0]!;
    expect(max).toBe(600);
  });

  it('an unknown tier name in the path is 400 INVALID_INPUT naming the parameter', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const error = expectError(await patchTier('gold', { limits: { requestsPerMinute: 5 } }, { 'X-API-Key': key }), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(/^name: /);
  });
});
