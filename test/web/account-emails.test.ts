import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../core/accounts/createUser.ts';
import { emailSkeleton } from '../../core/email/lookAlikes.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { formPoster } from '../support/http-helpers.ts';

// Email addresses over HTTP: one account however the address is typed (NFC or NFD, the domain's case
// or its xn-- form), and look-alikes of existing accounts refused at sign-up.

let db: TestDatabase;
let api: TestApi;
let post: ReturnType<typeof formPoster>;
const PASSWORD = 'correct horse battery staple';
let addresses = 0;
/** Each sign-up from an address of its own, so none runs into the sign-up limit. */
const register = (email: string) => post('/register', { email, password: PASSWORD }, `198.51.100.${++addresses}`);
const signIn = (email: string) => post('/login', { email, password: PASSWORD }, '192.0.2.1');
/** Sign-up answers the sign-in form, the same for a new address and a taken one (REFERENCE: Accounts on the website). */
const registered = (response: Response) => response.status === 200;
const signedIn = (response: Response) =>
  response.status === 303 && /afterimage_session=[^;]+/.test(response.headers.get('set-cookie') ?? '');
const stored = async (like: string) =>
  (await db.sql<{ email: string }[]>`select email from users where email_skeleton = ${await emailSkeleton(like)} order by email`).map(
    (row) => row.email,
  );

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql, { TRUST_PROXY: 'true', REGISTRATION: 'open' });
  post = formPoster(api.url);
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 10_000, pageRequestsPerMinute: 10_000 } });
  await createUser(db.sql, { email: 'admin@afterimage.localhost', tier: 'pro', isAdmin: true, password: PASSWORD });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

describe('account emails', () => {
  const nfc = 'jos\u00e9@example.org';
  const nfd = 'jose\u0301@example.org';

  it('are one account in NFC and NFD: signed up in one form, taken in the other, signed in with either', async () => {
    expect(registered(await register(nfd))).toBe(true);
    expect(await stored(nfc)).toEqual([nfc]); // stored precomposed
    expect(registered(await register(nfc))).toBe(true); // answered as any sign-up, and no second account
    expect(await stored(nfc)).toEqual([nfc]);
    expect(signedIn(await signIn(nfc))).toBe(true);
    expect(signedIn(await signIn(nfd))).toBe(true);
  });

  it("fold the domain's case and its xn-- form, and the local part's case", async () => {
    expect(registered(await register('Ivan@Пример.РФ'))).toBe(true);
    expect(await stored('ivan@пример.рф')).toEqual(['ivan@пример.рф']);
    expect(signedIn(await signIn('IVAN@xn--e1afmkfd.xn--p1ai'))).toBe(true);
    expect(signedIn(await signIn('ivan@ПРИМЕР.рф'))).toBe(true);
    expect(signedIn(await signIn(`JOSE\u0301@EXAMPLE.ORG`))).toBe(true);
  });

  it('refuse a Cyrillic look-alike of the administrator, and an all-Cyrillic look-alike of an account', async () => {
    const lookAlike = await register('\u0430dmin@afterimage.localhost'); // а is Cyrillic
    expect(lookAlike.status).toBe(400);
    expect(await lookAlike.text()).toContain('mixes Cyrillic and Latin letters');
    expect(await stored('admin@afterimage.localhost')).toEqual(['admin@afterimage.localhost']);

    expect(registered(await register('coco@example.org'))).toBe(true);
    const cyrillic = await register('\u0441\u043e\u0441\u043e@example.org'); // сосо: four Cyrillic letters
    expect(cyrillic.status).toBe(400);
    expect(await cyrillic.text()).toContain('looks like');
    expect(await stored('coco@example.org')).toEqual(['coco@example.org']);
    // A domain label mixing scripts is refused too; a whole label in another script is not.
    expect((await register('mail@g\u043e\u043egle.com')).status).toBe(400);
  });

  it('accept ordinary addresses in one other script: all Cyrillic, all Greek', async () => {
    for (const email of ['иван@пример.рф', 'αλέξης@παράδειγμα.gr', 'елена@example.org']) {
      expect(registered(await register(email)), email).toBe(true);
      expect(signedIn(await signIn(email)), email).toBe(true);
    }
  });

  it('are normalised and refused alike by `afterimage users create`', async () => {
    const env = { DATABASE_URL: db.url };
    const created = await runCommand(['users', 'create', '--email', 'Zoe\u0308@Example.ORG', '--tier', 'plus', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(await stored('zo\u00eb@example.org')).toEqual(['zo\u00eb@example.org']);
    const keyed = await runCommand(['keys', 'create', '--user', 'ZO\u00cb@example.org'], env);
    expect(keyed.code, keyed.stderr).toBe(0);
    const refused = await runCommand(['users', 'create', '--email', '\u0430dmin@afterimage.localhost', '--tier', 'plus'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('mixes Cyrillic and Latin letters');
  });
});
