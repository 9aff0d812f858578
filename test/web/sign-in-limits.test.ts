import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUser } from '../../core/accounts/createUser.ts';
import { signInLimits, signUpLimit } from '../../core/accounts/signInAttempts.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { hashedSubject } from '../../core/usage/hashedSubject.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { formPoster } from '../support/http-helpers.ts';

// Sign-in throttling over HTTP, as a browser posts the form from many client addresses (X-Forwarded-For
// behind TRUST_PROXY): refused per address and per (address, email), slowed per email, never locked.

let db: TestDatabase;
let api: TestApi;
let post: ReturnType<typeof formPoster>;
/** The waits the API asked for, in order: recorded instead of waited (the API's `pause`). */
const pauses: number[] = [];
const PASSWORD = 'correct horse battery staple';
const WRONG = 'a wrong guess, again';
const ADMIN = 'admin@afterimage.localhost';

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(
    db.sql,
    { TRUST_PROXY: 'true', REGISTRATION: 'open' },
    undefined,
    {},
    {
      pause: async (ms) => {
        pauses.push(ms);
      },
    },
  );
  post = formPoster(api.url);
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 10_000, pageRequestsPerMinute: 10_000 } });
  for (const email of [ADMIN, 'carol@example.org', 'dave@example.org', 'erin@example.org'])
    await createUser(db.sql, { email, tier: 'registered', isAdmin: email === ADMIN, password: PASSWORD });
}, 120_000);
beforeEach(() => {
  pauses.length = 0;
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const signIn = (email: string, password: string, address: string) => post('/login', { email, password }, address);
const signedIn = (response: Response) =>
  response.status === 303 && /afterimage_session=[^;]+/.test(response.headers.get('set-cookie') ?? '');

/** Wrong passwords from `address` until it is refused (at most `most` tries): the statuses seen. */
async function failUntilRefused(email: string, address: string, most: number): Promise<{ statuses: number[]; refusal: Response }> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < most; attempt++) {
    const response = await signIn(email, WRONG, address);
    statuses.push(response.status);
    if (response.status === 429) return { statuses, refusal: response };
  }
  throw new Error(`${address} was never refused: ${statuses.join(' ')}`);
}

describe('sign-in limits', () => {
  it("lets the owner in after others' failures from two addresses: the account slows down, it never locks", async () => {
    for (const address of ['203.0.113.1', '203.0.113.2']) {
      const { statuses, refusal } = await failUntilRefused(ADMIN, address, 25);
      // Refused by the (address, email) pair's limit, not after the account's.
      expect(statuses).toEqual([...Array(signInLimits.perAddressAndEmail.max).fill(401), 429]);
      expect(Number(refusal.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refusal.text()).toContain('Too many sign-in attempts for this account from this address');
    }
    const owner = await signIn(ADMIN, PASSWORD, '198.51.100.7');
    expect(signedIn(owner)).toBe(true);
    // Failures 6 to 10 waited longer and longer; the owner's attempt, the 11th, waited as long as the last.
    expect(pauses).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
  });

  it('refuses one address hammering many emails with 429 and Retry-After, and no other address', async () => {
    const address = '203.0.113.20';
    for (let attempt = 0; attempt < signInLimits.perAddress.max; attempt++)
      expect((await signIn(`guess${attempt}@example.org`, WRONG, address)).status).toBe(401);
    const refused = await signIn('dave@example.org', PASSWORD, address);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(2 * signInLimits.perAddress.windowSeconds);
    expect(await refused.text()).toContain('Too many sign-in attempts from this address');
    expect(signedIn(await signIn('dave@example.org', PASSWORD, '203.0.113.21'))).toBe(true);
  });

  it('refuses an (address, email) pair past its limit, even the right password, but not the address for other emails', async () => {
    const address = '203.0.113.30';
    const { statuses } = await failUntilRefused('carol@example.org', address, 12);
    expect(statuses).toHaveLength(signInLimits.perAddressAndEmail.max + 1);
    const refused = await signIn('carol@example.org', PASSWORD, address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(signedIn(await signIn('dave@example.org', PASSWORD, address))).toBe(true);
    expect(signedIn(await signIn('carol@example.org', PASSWORD, '203.0.113.31'))).toBe(true);
  });

  it('counts sign-ups in a budget of their own: they use up none of the sign-in budget', async () => {
    const address = '203.0.113.40';
    for (let index = 0; index < signUpLimit.max; index++) {
      // Sign-up answers the sign-in form whether the address was new or taken (REFERENCE: Accounts on the website).
      const response = await post('/register', { email: `newcomer${index}@example.org`, password: PASSWORD }, address);
      expect(response.status).toBe(200);
      expect(await db.sql`select 1 from users where email = ${`newcomer${index}@example.org`}`).toHaveLength(1);
    }
    const refused = await post('/register', { email: 'one-too-many@example.org', password: PASSWORD }, address);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('Too many sign-ups from this address');
    expect(await db.sql`select 1 from users where email = 'one-too-many@example.org'`).toHaveLength(0);
    // The address's sign-in budget is whole: nothing was counted in it.
    expect(
      await db.sql`select 1 from usage_counters where subject = ${hashedSubject(`sign-in-address:${address}`)} and used > 0`,
    ).toHaveLength(0);
    expect(signedIn(await signIn('erin@example.org', PASSWORD, address))).toBe(true);
  });

  it("slows an email's sign-ins past its first failures, from any addresses, the right password too; other emails are not slowed", async () => {
    const email = 'slow@example.org';
    await createUser(db.sql, { email, tier: 'registered', isAdmin: false, password: PASSWORD });
    for (let attempt = 0; attempt < 7; attempt++) expect((await signIn(email, WRONG, `192.0.2.${100 + attempt}`)).status).toBe(401);
    expect(pauses).toEqual([500, 1000]);
    expect(signedIn(await signIn('dave@example.org', PASSWORD, '192.0.2.120'))).toBe(true);
    expect(pauses).toEqual([500, 1000]);
    expect(signedIn(await signIn(email, PASSWORD, '192.0.2.121'))).toBe(true);
    expect(pauses).toEqual([500, 1000, 2000]);
    // An email nobody has counts the same, so the slowdown does not tell which accounts exist.
    for (let attempt = 0; attempt < 6; attempt++) await signIn('nobody@example.org', WRONG, `192.0.2.${130 + attempt}`);
    expect(pauses).toEqual([500, 1000, 2000, 500]);
  });
});
