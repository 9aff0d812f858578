import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import { createSession } from '../../core/accounts/createSession.ts';
import { createSignInLink } from '../../core/accounts/createSignInLink.ts';
import { createUser, type User } from '../../core/accounts/createUser.ts';
import { endSession } from '../../core/accounts/endSession.ts';
import { verifyPassword } from '../../core/accounts/password.ts';
import { redeemSignInLink } from '../../core/accounts/redeemSignInLink.ts';
import { register } from '../../core/accounts/register.ts';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import { setPassword } from '../../core/accounts/setPassword.ts';
import { signIn } from '../../core/accounts/signIn.ts';
import {
  accountSlowdown,
  countSignInAttempt,
  countSignUp,
  signInLimits,
  signUpLimit,
  slowdownMs,
} from '../../core/accounts/signInAttempts.ts';
import { AppError } from '../../core/errors.ts';
import { hashToken } from '../../core/keys.ts';
import { hashedSubject } from '../../core/usage/hashedSubject.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
const PASSWORD = 'correct horse battery staple';
let counter = 0;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const newUser = (options: { password?: string; tier?: User['tier'] } = {}) =>
  createUser(db.sql, {
    email: `person${++counter}@example.org`,
    tier: options.tier ?? 'registered',
    isAdmin: false,
    ...(options.password ? { password: options.password } : {}),
  });

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('sessions', () => {
  it('store only the hash of their token, which signs its user in until the session ends', async () => {
    const user = await newUser();
    const session = await createSession(db.sql, user.id);
    expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await db.sql<{ tokenHash: Buffer }[]>`select token_hash as "tokenHash" from sessions where id = ${session.sessionId}`;
    expect(row!.tokenHash.equals(hashToken(session.token))).toBe(true);
    const [everything] = await db.sql<{ text: string }[]>`select string_agg(s::text, ' ') as text from sessions s`;
    expect(everything!.text).not.toContain(session.token);

    expect(await sessionUser(db.sql, session.token)).toEqual({
      sessionId: session.sessionId,
      userId: user.id,
      email: user.email,
      isAdmin: false,
      tier: 'registered',
    });
    expect(await endSession(db.sql, session.token)).toBe(true);
    expect(await sessionUser(db.sql, session.token)).toBeUndefined();
    expect(await endSession(db.sql, session.token)).toBe(false);
  });

  it('know nothing of a made-up or malformed token', async () => {
    expect(await sessionUser(db.sql, 'A'.repeat(43))).toBeUndefined();
    expect(await sessionUser(db.sql, "'; drop table sessions; --")).toBeUndefined();
  });

  it('end after a week unused; use extends them by a week, written at most once a minute, up to a month after they began', async () => {
    const user = await newUser();
    const idle = await createSession(db.sql, user.id);
    await db.sql`update sessions set created_at = now() - interval '8 days', last_seen_at = now() - interval '8 days', expires_at = now() - interval '1 day' where id = ${idle.sessionId}`;
    expect(await sessionUser(db.sql, idle.token)).toBeUndefined();

    const used = await createSession(db.sql, user.id);
    // The idle session went when this one began: expired sessions need no sweeping job.
    expect(await db.sql`select 1 from sessions where id = ${idle.sessionId}`).toHaveLength(0);
    await db.sql`update sessions set created_at = now() - interval '6 days', last_seen_at = now() - interval '6 days', expires_at = now() + interval '1 day' where id = ${used.sessionId}`;
    expect(await sessionUser(db.sql, used.token)).toBeDefined();
    const [extended] = await db.sql<{ days: number; seenAgo: number }[]>`
      select (extract(epoch from expires_at - now()) / 86400)::float8 as days, extract(epoch from now() - last_seen_at)::float8 as "seenAgo" from sessions where id = ${used.sessionId}`;
    expect(extended!.days).toBeCloseTo(7, 1);
    expect(extended!.seenAgo).toBeLessThan(5);

    const [before] = await db.sql<{ lastSeen: Date }[]>`select last_seen_at as "lastSeen" from sessions where id = ${used.sessionId}`;
    await sessionUser(db.sql, used.token);
    const [after] = await db.sql<{ lastSeen: Date }[]>`select last_seen_at as "lastSeen" from sessions where id = ${used.sessionId}`;
    expect(after!.lastSeen).toEqual(before!.lastSeen); // seen a moment ago: not written again

    await db.sql`update sessions set created_at = now() - interval '29 days 12 hours', last_seen_at = now() - interval '2 minutes' where id = ${used.sessionId}`;
    await sessionUser(db.sql, used.token);
    const [capped] = await db.sql<
      { hours: number }[]
    >`select (extract(epoch from expires_at - now()) / 3600)::float8 as hours from sessions where id = ${used.sessionId}`;
    expect(capped!.hours).toBeCloseTo(12, 0); // 30 days after it began, not a week from now
  });

  it('follow their user: a changed tier or a deleted user applies at the next request', async () => {
    const user = await newUser();
    const session = await createSession(db.sql, user.id);
    await db.sql`update users set tier = 'plus', is_admin = true where id = ${user.id}`;
    expect(await sessionUser(db.sql, session.token)).toMatchObject({ tier: 'plus', isAdmin: true });
    await db.sql`delete from users where id = ${user.id}`;
    expect(await sessionUser(db.sql, session.token)).toBeUndefined();
  });
});

describe('setPassword', () => {
  it('replaces the hash and ends every other session of the user, keeping the one asked to keep', async () => {
    const user = await newUser({ password: PASSWORD });
    const other = await newUser();
    const [mine, elsewhere, third, theirs] = await Promise.all([
      createSession(db.sql, user.id),
      createSession(db.sql, user.id),
      createSession(db.sql, user.id),
      createSession(db.sql, other.id),
    ]);
    expect(await setPassword(db.sql, user.id, 'a new and longer passphrase', { keepSessionId: mine.sessionId })).toEqual({
      endedSessions: 2,
    });
    expect(await sessionUser(db.sql, mine.token)).toBeDefined();
    expect(await sessionUser(db.sql, elsewhere.token)).toBeUndefined();
    expect(await sessionUser(db.sql, third.token)).toBeUndefined();
    expect(await sessionUser(db.sql, theirs.token)).toBeDefined();
    const [row] = await db.sql<{ hash: string }[]>`select password_hash as hash from users where id = ${user.id}`;
    expect((await verifyPassword('a new and longer passphrase', row!.hash)).valid).toBe(true);
    expect((await verifyPassword(PASSWORD, row!.hash)).valid).toBe(false);

    // Without one to keep (the operator's CLI), every session ends.
    expect(await setPassword(db.sql, user.id, PASSWORD)).toEqual({ endedSessions: 1 });
    expect(await sessionUser(db.sql, mine.token)).toBeUndefined();
  });

  it('is refused by the database for a string that is not a hash of the stored form', async () => {
    const user = await newUser();
    await expect(db.sql`update users set password_hash = ${PASSWORD} where id = ${user.id}`).rejects.toThrow(/check constraint/);
  });
});

describe('signIn', () => {
  it('opens a session for the right email (in any case) and password', async () => {
    const user = await newUser({ password: PASSWORD });
    const session = await signIn(db.sql, { email: user.email.toUpperCase(), password: PASSWORD, address: '192.0.2.1' });
    expect(await sessionUser(db.sql, session.token)).toMatchObject({ userId: user.id });
  });

  it('says only "wrong email or password" for a wrong password, an unknown email and a user without a password', async () => {
    const user = await newUser({ password: PASSWORD });
    const keyOnly = await newUser();
    for (const attempt of [
      { email: user.email, password: 'not the right password' },
      { email: 'nobody@example.org', password: PASSWORD },
      { email: keyOnly.email, password: PASSWORD },
    ]) {
      const error = await refusal(signIn(db.sql, { ...attempt, address: '192.0.2.2' }));
      expect(error.code).toBe('UNAUTHORIZED');
      expect(error.message).toMatch(/^Wrong email or password/);
    }
    expect(await db.sql`select 1 from sessions where user_id in (${user.id}, ${keyOnly.id})`).toHaveLength(0);
  });

  it('hashes a password made with older parameters again at sign-in', async () => {
    const user = await newUser();
    const salt = randomBytes(16);
    const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
    const stored = `$scrypt$ln=12,r=8,p=1$${b64(salt)}$${b64(scryptSync(PASSWORD, salt, 32, { N: 2 ** 12, r: 8, p: 1 }))}`;
    await db.sql`update users set password_hash = ${stored} where id = ${user.id}`;
    await signIn(db.sql, { email: user.email, password: PASSWORD, address: '192.0.2.3' });
    const [row] = await db.sql<{ hash: string }[]>`select password_hash as hash from users where id = ${user.id}`;
    expect(row!.hash).toMatch(new RegExp(`^\\$scrypt\\$ln=${process.env.PASSWORD_HASH_COST},r=8,p=3\\$`));
    expect(await verifyPassword(PASSWORD, row!.hash)).toEqual({ valid: true, outdated: false });
  });
});

describe('sign-in attempts', () => {
  const counted = async (name: string) =>
    (await db.sql<{ used: number }[]>`select coalesce(sum(used), 0)::int as used from usage_counters where limit_name = ${name}`)[0]!.used;

  it(`allow ${signInLimits.perAddress.max} failures per address in 15 minutes, then 429 with when to come back, before any password is checked`, async () => {
    const user = await newUser({ password: PASSWORD });
    const address = '198.51.100.10';
    for (let attempt = 0; attempt < signInLimits.perAddress.max - 1; attempt++)
      await countSignInAttempt(db.sql, { address, email: `guess${attempt}@example.org` });
    const last = await refusal(signIn(db.sql, { email: user.email, password: 'a wrong guess here', address }));
    expect(last.code).toBe('UNAUTHORIZED');

    // Even the right password is refused now: the limit is checked first.
    const error = await refusal(signIn(db.sql, { email: user.email, password: PASSWORD, address }));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.status).toBe(429);
    expect(error.message).toMatch(
      /^Too many sign-in attempts from this address: try again after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in \d+ minutes?\)$/,
    );
    const retryAfter = Number(error.options.headers!['Retry-After']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(2 * 900);
    expect(error.options.details).toMatchObject({ limit: 'signInsPerAddress', max: 10 });

    // Another address is not held back.
    await signIn(db.sql, { email: user.email, password: PASSWORD, address: '198.51.100.11' });
  });

  it('give back a successful sign-in: only failures add up', async () => {
    const user = await newUser({ password: PASSWORD });
    const address = '198.51.100.20';
    const before = await counted('signInsPerAccount');
    for (let attempt = 0; attempt < signInLimits.perAddress.max - 1; attempt++)
      await countSignInAttempt(db.sql, { address, email: `other${attempt}@example.org` });
    await signIn(db.sql, { email: user.email, password: PASSWORD, address });
    expect(await counted('signInsPerAccount')).toBe(before + signInLimits.perAddress.max - 1);
    await countSignInAttempt(db.sql, { address, email: user.email }); // the tenth still fits
    expect((await refusal(countSignInAttempt(db.sql, { address, email: user.email }))).code).toBe('RATE_LIMITED');
  });

  it(`count sign-ups per address (${signUpLimit.max} an hour), successful or not, apart from sign-ins`, async () => {
    const address = '198.51.100.30';
    for (let attempt = 0; attempt < signUpLimit.max - 1; attempt++) await countSignUp(db.sql, address);
    const email = `new${++counter}@example.org`;
    await register(db.sql, { email, password: PASSWORD, address });
    expect(await db.sql`select tier, is_admin from users where email = ${email}`).toEqual([{ tier: 'registered', is_admin: false }]);
    const error = await refusal(register(db.sql, { email: `new${++counter}@example.org`, password: PASSWORD, address }));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.message).toMatch(/^Too many sign-ups from this address/);
    expect(await db.sql`select 1 from usage_counters where subject = ${hashedSubject(`sign-in-address:${address}`)}`).toHaveLength(0);
  });

  it('slow an email down past its first failures, doubling to a few seconds at most', () => {
    const waits = Array.from({ length: 12 }, (_, index) => slowdownMs(index + 1));
    expect(waits).toEqual([0, 0, 0, 0, 0, 500, 1000, 2000, 4000, 4000, 4000, 4000]);
    expect(slowdownMs(1_000_000)).toBe(accountSlowdown.maxMs);
  });
});

describe('one-time sign-in links', () => {
  it('sign in once; a second use is refused, and only the hash of the token is stored', async () => {
    const user = await newUser();
    const link = await createSignInLink(db.sql, user.id);
    expect((link.expiresAt.getTime() - Date.now()) / 60_000).toBeCloseTo(60, 0);
    const [row] = await db.sql<{ hash: Buffer }[]>`select token_hash as hash from sign_in_links where user_id = ${user.id}`;
    expect(row!.hash.equals(hashToken(link.token))).toBe(true);

    const [first, second] = await Promise.allSettled([redeemSignInLink(db.sql, link.token), redeemSignInLink(db.sql, link.token)]);
    const sessions = [first, second].filter((result) => result.status === 'fulfilled');
    expect(sessions).toHaveLength(1); // two clicks at once: one session
    expect(await sessionUser(db.sql, (sessions[0] as PromiseFulfilledResult<{ token: string }>).value.token)).toMatchObject({
      userId: user.id,
    });
    const error = await refusal(redeemSignInLink(db.sql, link.token));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toMatch(/already used or expired.*afterimage users password/);
  });

  it('expire, and an expired link is deleted when tried', async () => {
    const user = await newUser();
    const link = await createSignInLink(db.sql, user.id);
    await db.sql`update sign_in_links set created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' where user_id = ${user.id}`;
    expect((await refusal(redeemSignInLink(db.sql, link.token))).code).toBe('UNAUTHORIZED');
    expect(await db.sql`select 1 from sign_in_links where user_id = ${user.id}`).toHaveLength(0);
    expect(await db.sql`select 1 from sessions where user_id = ${user.id}`).toHaveLength(0);
  });
});

describe('bootstrapAdmin', () => {
  it('gives the first administrator a key and a one-time sign-in link, and nothing on a database with users', async () => {
    const empty = await createTestDatabase();
    try {
      const admin = await bootstrapAdmin(empty.sql);
      expect(admin).toMatchObject({ email: 'admin@afterimage.localhost', scope: 'L4' });
      const session = await redeemSignInLink(empty.sql, admin!.signInToken);
      expect(await sessionUser(empty.sql, session.token)).toMatchObject({
        email: 'admin@afterimage.localhost',
        isAdmin: true,
        tier: 'pro',
      });
      expect(await bootstrapAdmin(empty.sql)).toBeUndefined();
    } finally {
      await empty.drop();
    }
  });
});
