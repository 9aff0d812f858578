import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_CHANNEL, type ApiKeyCache, cachedApiKeys } from '../../core/accounts/cachedApiKeys.ts';
import { revokeApiKey } from '../../core/accounts/revokeApiKey.ts';
import { setUserTier } from '../../core/accounts/setUserTier.ts';
import { hashApiKey } from '../../core/keys.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { restoreTiers, snapshotTiers, startApiServer } from '../support/http-helpers.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `change` with the announcing triggers off: what a kept lookup does not hear of. */
async function unannounced(change: () => Promise<unknown>): Promise<void> {
  await db.sql`alter table api_keys disable trigger api_keys_auth_change`;
  try {
    await change();
  } finally {
    await db.sql`alter table api_keys enable trigger api_keys_auth_change`;
  }
}

/**
 * Waits until every announcement committed so far has been heard by the caches listening on db.sql: a
 * listener added to the same LISTEN connection hears a notification after those registered before it,
 * and notifications arrive in commit order.
 */
async function announcementsHeard(): Promise<void> {
  const marker = randomUUID();
  let heard!: () => void;
  const arrived = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const listener = await db.sql.listen(AUTH_CHANNEL, (payload) => payload === marker && heard());
  await db.sql`select pg_notify(${AUTH_CHANNEL}, ${marker})`;
  await arrived;
  await listener.unlisten();
}

/**
 * Ends the LISTEN connection of db.sql, as a network failure or a restart would, and waits until it listens
 * again: listeners on one channel are listened again in the order they were added, so this one's turn
 * comes after the caches made before it.
 */
async function dropListenConnection(): Promise<void> {
  let listened = 0;
  const listener = await db.sql.listen(
    AUTH_CHANNEL,
    () => undefined,
    () => {
      listened += 1;
    },
  );
  const ended = await db.sql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`;
  expect(ended.length).toBeGreaterThan(0);
  await eventually(() => listened >= 2, 'LISTEN to hold again');
  await listener.unlisten();
}

/** A new user's key, looked up (and so kept) once every announcement before it has been heard. */
async function keptKey(keys: ApiKeyCache) {
  const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
  const hash = hashApiKey(key);
  await announcementsHeard();
  expect(await keys.find(hash)).toMatchObject({ userId: user.id, revoked: false });
  return { user, hash };
}

describe('API keys kept by each process', () => {
  it('answers a kept key without asking the database until a change is announced', async () => {
    const keys = await cachedApiKeys(db.sql);
    try {
      const { user, hash } = await keptKey(keys);
      // Revoked without the announcement: the kept lookup stands (it is not read again)…
      await unannounced(() => revokeApiKey(db.sql, user.id));
      expect((await keys.find(hash))?.revoked).toBe(false);
      // …until any change to keys, users or tiers is announced.
      await db.sql`select pg_notify(${AUTH_CHANNEL}, 'api_keys')`;
      await eventually(async () => (await keys.find(hash))?.revoked === true, 'the revocation to be seen');
    } finally {
      await keys.close();
    }
  });

  it('drops what it kept when its LISTEN connection drops, and keeps nothing until it listens again', async () => {
    const keys = await cachedApiKeys(db.sql);
    try {
      const { user, hash } = await keptKey(keys);
      // A change whose announcement is lost with the connection.
      await unannounced(() => revokeApiKey(db.sql, user.id));
      await dropListenConnection();
      expect((await keys.find(hash))?.revoked).toBe(true);
      // Listening again, it keeps lookups again (and announcements reach it).
      const other = await createKeyedUser(db.sql, { tier: 'pro' });
      const otherHash = hashApiKey(other.key);
      await eventually(async () => (await keys.find(otherHash))?.tier === 'pro', 'the other key to be found');
      await setUserTier(db.sql, other.user.id, 'plus');
      await eventually(async () => (await keys.find(otherHash))?.tier === 'plus', 'the tier change to be seen');
    } finally {
      await keys.close();
    }
  });

  it('drops the tier cache when a tier changes, however long it keeps tiers', async () => {
    const tiers = cachedTiers(db.sql, 60 * 60_000);
    const keys = await cachedApiKeys(db.sql, { tiers });
    const before = await snapshotTiers(db.sql);
    try {
      expect((await tiers.get()).get('plus')!.limits.requestsPerMinute.max).not.toBe(77);
      await updateTier(db.sql, 'plus', { limits: { requestsPerMinute: 77 } });
      await eventually(async () => (await tiers.get()).get('plus')!.limits.requestsPerMinute.max === 77, 'the new limit');
    } finally {
      await restoreTiers(db.sql, before);
      await keys.close();
    }
  });
});

describe('two API processes sharing a database', () => {
  it('a key revoked elsewhere is refused by both, each having kept it', async () => {
    const keepForever = { tiers: cachedTiers(db.sql, 60_000), keepKeysMs: 60 * 60_000 };
    const first = await startApiServer(db.sql, keepForever);
    const second = await startApiServer(db.sql, { ...keepForever, tiers: cachedTiers(db.sql, 60_000) });
    try {
      const { key, user } = await createKeyedUser(db.sql, { tier: 'pro' });
      const status = async (url: string) => (await fetch(`${url}/api/features`, { headers: { 'X-API-Key': key } })).status;
      expect([await status(first.url), await status(second.url)]).toEqual([200, 200]);
      expect([await status(first.url), await status(second.url)]).toEqual([200, 200]);
      // As `afterimage keys revoke` does it, from a third process.
      await revokeApiKey(db.sql, user.id);
      await eventually(async () => (await status(first.url)) === 401, 'the first API to refuse the key');
      await eventually(async () => (await status(second.url)) === 401, 'the second API to refuse the key');
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('a tier losing API access reaches both at once', async () => {
    const keepForever = { keepKeysMs: 60 * 60_000 };
    const first = await startApiServer(db.sql, { ...keepForever, tiers: cachedTiers(db.sql, 60_000) });
    const second = await startApiServer(db.sql, { ...keepForever, tiers: cachedTiers(db.sql, 60_000) });
    const before = await snapshotTiers(db.sql);
    try {
      const { key } = await createKeyedUser(db.sql, { tier: 'plus' });
      await updateTier(db.sql, 'plus', { apiAccess: true });
      // A data route: a tier without API access is refused there (403).
      const status = async (url: string) =>
        (await fetch(`${url}/api/videos/dQw4w9WgXcQ/status-history`, { headers: { 'X-API-Key': key } })).status;
      await eventually(async () => (await status(first.url)) !== 403 && (await status(second.url)) !== 403, 'API access');
      await updateTier(db.sql, 'plus', { apiAccess: false });
      await eventually(async () => (await status(first.url)) === 403, 'the first API to refuse the tier');
      await eventually(async () => (await status(second.url)) === 403, 'the second API to refuse the tier');
    } finally {
      await restoreTiers(db.sql, before);
      await first.close();
      await second.close();
    }
  });
});
