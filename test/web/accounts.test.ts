import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../core/accounts/createSession.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import { countSignInAttempt, signInLimits } from '../../core/accounts/signInAttempts.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { accessibilityViolations, launchBrowser, openTab, overflowsWidth, saveScreenshot } from '../support/browser.ts';
import { createSignedInUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// Accounts in a real browser: signing in and out, forms refused without their CSRF token, the 429
// page after too many sign-ins, an API key shown once, and private items kept to their owner.

let db: TestDatabase;
let api: TestApi;
let browser: Browser;
const PASSWORD = 'correct horse battery staple';
const alice = { email: 'alice@example.org', password: PASSWORD };
const bob = { email: 'bob@example.org', password: 'another long passphrase' };
const CHANNEL = 'UCaliceAliceAliceAlice12';
const VIDEO = 'aliceVideo1';

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  browser = await launchBrowser();
  // Every page counts against the anonymous tier's 30 requests a minute, from one address here.
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 10_000 } });
  const [a] = await Promise.all([
    createUser(db.sql, { email: alice.email, tier: 'pro', isAdmin: false, password: alice.password }),
    createUser(db.sql, { email: bob.email, tier: 'plus', isAdmin: false, password: bob.password }),
  ]);
  await db.sql`insert into channels (channel_id, title) values (${CHANNEL}, 'Alice channel')`;
  await db.sql`insert into videos (video_id, channel_id, title) values (${VIDEO}, ${CHANNEL}, 'Alice private interview')`;
  await db.sql`insert into summaries (video_id, channel_id, owner_id, private) values (${VIDEO}, ${CHANNEL}, ${a!.id}, true)`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await db?.drop();
});

async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${api.url}/login`);
  await page.type('#login-email', who.email);
  await page.type('#login-password', who.password);
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
}

const text = (page: Page) => page.$eval('main', (element) => element.textContent ?? '');

describe('accounts in the browser', () => {
  it('signs in with email and password, shows the account (tier, usage, private items), and signs out', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await signIn(page, alice);
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.$eval('h1', (element) => element.textContent)).toBe('Your account');
    const shown = await text(page);
    expect(shown).toContain('alice@example.org');
    expect(shown).toContain('Pro tier');
    expect(shown).toContain('Alice private interview');
    // The same numbers as /api/features: this page view was counted once in requestsPerMinute.
    expect(await page.$eval('tr[data-limit="requestsPerMinute"] td:nth-child(3)', (element) => element.textContent)).toBe('600 per minute');
    const cookies = await page.cookies();
    const session = cookies.find((cookie) => cookie.name === 'afterimage_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'account-1280');
    await page.setViewport({ width: 390, height: 900 });
    expect(await overflowsWidth(page)).toBe(false);
    await page.setViewport({ width: 1280, height: 900 });

    await Promise.all([page.waitForNavigation(), page.click('form[action="/logout"] button')]);
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.$eval('header nav', (element) => element.textContent)).toContain('Sign in');
    // The session is gone from the database: its cookie, replayed, signs nobody in.
    expect(await db.sql`select 1 from sessions`).toHaveLength(0);
    const replayed = await fetch(`${api.url}/account`, {
      headers: { Cookie: `afterimage_session=${session.value}`, Accept: 'text/html' },
      redirect: 'manual',
    });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/login?next=%2Faccount');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a wrong password in the form, accessibly', async () => {
    const { page, problems } = await openTab(browser, api.url, 390);
    await signIn(page, { email: alice.email, password: 'not the password at all' });
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.$eval('[role=alert]', (element) => element.textContent)).toContain('Wrong email or password');
    expect(await page.$eval('#login-email', (element) => (element as HTMLInputElement).value)).toBe(alice.email);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(await overflowsWidth(page)).toBe(false);
    await saveScreenshot(page, 'login-error-390');
    expect(problems.filter((problem) => !problem.includes('401'))).toEqual([]);
    await page.close();
  });

  it('refuses a form posted without its CSRF token (403 page), signed in or not', async () => {
    const { page } = await openTab(browser, api.url);
    await page.goto(`${api.url}/login`);
    // The same form with its hidden token removed, as another site's form would arrive.
    await page.$eval('input[name=_csrf]', (element) => element.remove());
    await page.type('#login-email', alice.email);
    await page.type('#login-password', alice.password);
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button')]);
    expect(answer!.status()).toBe(403);
    expect(await text(page)).toContain('security token is missing');
    expect(await db.sql`select 1 from sessions`).toHaveLength(0);

    await signIn(page, alice);
    const session = (await page.cookies()).find((cookie) => cookie.name === 'afterimage_session')!.value;
    const forged = await fetch(`${api.url}/account/keys`, {
      method: 'POST',
      headers: { Cookie: `afterimage_session=${session}`, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
      body: 'scope=L4',
    });
    expect(forged.status).toBe(403);
    expect(await db.sql`select 1 from api_keys`).toHaveLength(0);
    await page.close();
  });

  it('creates an API key and shows it once, after a redirect: a reload posts nothing; the key works against the API', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await signIn(page, alice);
    const posts: string[] = [];
    page.on('request', (request) => void (request.method() === 'POST' && posts.push(request.url())));
    await Promise.all([page.waitForNavigation(), page.click('form[action="/account/keys"] button')]);
    expect(new URL(page.url()).pathname).toBe('/account/keys/new');
    const key = await page.$eval('#new-key', (element) => element.textContent ?? '');
    expect(key).toMatch(/^tsk_[A-Za-z0-9]{48}$/);
    expect(page.url()).not.toContain(key.slice(4));
    // The copy button (site.js) puts the key on the clipboard.
    await browser.defaultBrowserContext().overridePermissions(api.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    await page.click('button[data-copy="new-key"]');
    await page.waitForFunction(() => document.querySelector('button[data-copy]')?.textContent === 'Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'account-new-key-1280');
    await page.setViewport({ width: 390, height: 900 });
    expect(await overflowsWidth(page)).toBe(false);
    await saveScreenshot(page, 'account-new-key-390');
    await page.setViewport({ width: 1280, height: 900 });
    const features = await api.call('/api/features', { key });
    expect(features.body.data.account).toMatchObject({ email: alice.email, keyScope: 'L4' });

    // Reloading the page that showed the key posts nothing, creates no key and shows the key no more.
    const keysBefore = await db.sql`select id from api_keys`;
    expect(posts).toHaveLength(1);
    await page.reload();
    expect(posts).toHaveLength(1);
    expect(await db.sql`select id from api_keys`).toEqual(keysBefore);
    expect(await page.content()).not.toContain(key);
    expect(await text(page)).toContain('already shown');
    expect((await api.call('/api/features', { key })).status).toBe(200);

    // Replacing asks first, saying the old key stops working at once.
    const replace = 'details.replace-key';
    expect(await page.$eval(replace, (element) => (element as HTMLDetailsElement).open)).toBe(false);
    expect(await page.$eval(`${replace} form button`, (element) => element.checkVisibility())).toBe(false);
    await page.click(`${replace} summary`);
    expect(await page.$eval(replace, (element) => element.textContent)).toContain('the old one stops working at once');
    await saveScreenshot(page, 'account-replace-key-1280');
    await page.setViewport({ width: 390, height: 900 });
    expect(await overflowsWidth(page)).toBe(false);
    await saveScreenshot(page, 'account-replace-key-390');
    await page.setViewport({ width: 1280, height: 900 });
    await Promise.all([page.waitForNavigation(), page.click(`${replace} form button`)]);
    const replacement = await page.$eval('#new-key', (element) => element.textContent ?? '');
    expect(replacement).not.toBe(key);
    expect((await api.call('/api/features', { key })).status).toBe(401);

    await page.goto(`${api.url}/account`);
    const again = await page.content();
    expect(again).not.toContain(replacement);
    expect(again).toContain(replacement.slice(0, 10));
    await Promise.all([page.waitForNavigation(), page.click('form[action="/account/keys/revoke"] button')]);
    expect(await text(page)).toContain('Your API key was revoked');
    const revoked = await api.call('/api/features', { key: replacement });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.message).toMatch(/revoked/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('keeps private items to their owner: another account sees none of them', async () => {
    const { page } = await openTab(browser, api.url);
    await signIn(page, bob);
    const shown = await text(page);
    expect(shown).toContain('bob@example.org');
    expect(shown).not.toContain('Alice private interview');
    expect(await page.content()).not.toContain(VIDEO);
    await page.close();
  });

  it("lets an administrator create a user (with a one-time link), set a tier and edit a tier's limit; others get 403", async () => {
    await createUser(db.sql, { email: 'root@example.org', tier: 'pro', isAdmin: true, password: PASSWORD });
    const { page, problems } = await openTab(browser, api.url);
    await signIn(page, { email: 'root@example.org', password: PASSWORD });
    await page.goto(`${api.url}/admin/users`);
    await page.type('#new-email', 'carol@example.org');
    await page.select('#new-tier', 'plus');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/admin/users"] button')]);
    expect(await page.$eval('#sign-in-link', (element) => element.textContent)).toMatch(/\/login\/once\/[A-Za-z0-9_-]{43}$/);
    const [carol] = await db.sql<{ id: string; tier: string }[]>`select id, tier from users where email = 'carol@example.org'`;
    expect(carol!.tier).toBe('plus');
    await page.select(`#tier-${carol!.id}`, 'pro');
    await Promise.all([page.waitForNavigation(), page.click(`form:has(#tier-${carol!.id}) button`)]);
    expect((await db.sql`select tier from users where id = ${carol!.id}`)[0]!.tier).toBe('pro');
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'admin-users-1280');

    await page.goto(`${api.url}/admin/tiers`);
    await page.$eval('#plus-summaryGenerationsPerDay', (element) => {
      (element as HTMLInputElement).value = '';
    });
    await page.type('#plus-summaryGenerationsPerDay', '7');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/admin/tiers/plus"] button')]);
    expect(
      (await db.sql`select max_count from tier_limits where tier = 'plus' and limit_name = 'summaryGenerationsPerDay'`)[0]!.max_count,
    ).toBe(7);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems).toEqual([]);

    const { page: other } = await openTab(browser, api.url);
    await signIn(other, bob);
    expect((await other.goto(`${api.url}/admin/users`))!.status()).toBe(403);
    await page.close();
    await other.close();
  });

  it("takes no API key as a credential: an administrator's L1 key gets the 403 page, without users or tiers", async () => {
    const admin = await createSignedInUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L1' });
    for (const path of ['/admin/users', '/admin/tiers']) {
      const withKey = await fetch(`${api.url}${path}`, { headers: { Accept: 'text/html', 'X-API-Key': admin.key } });
      expect(withKey.status).toBe(403);
      const html = await withKey.text();
      expect(html).toContain('is for administrators only');
      expect(html).not.toContain(alice.email);
      expect(html).not.toContain('summaryGenerationsPerDay');
      // The same administrator, signed in, is shown the page.
      const signedIn = await fetch(`${api.url}${path}`, { headers: { Accept: 'text/html', Cookie: admin.cookie } });
      expect(signedIn.status).toBe(200);
    }
    const users = await (await fetch(`${api.url}/admin/users`, { headers: { Accept: 'text/html', Cookie: admin.cookie } })).text();
    expect(users).toContain(alice.email);
  });

  it('changes a password: the current one is asked for, and other sessions end', async () => {
    const dave = { email: 'dave@example.org', password: PASSWORD };
    const user = await createUser(db.sql, { email: dave.email, tier: 'registered', isAdmin: false, password: dave.password });
    const elsewhere = await createSession(db.sql, user.id); // signed in on another device
    const { page, problems } = await openTab(browser, api.url);
    await signIn(page, dave);
    await page.type('#current-password', 'not my current one');
    await page.type('#new-password', 'a brand new passphrase');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/account/password"] button')]);
    expect(await page.$eval('[role=alert]', (element) => element.textContent)).toContain('The current password is wrong');
    await page.type('#current-password', dave.password);
    await page.type('#new-password', 'a brand new passphrase');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/account/password"] button')]);
    expect(await text(page)).toContain('Password changed');
    expect(await sessionUser(db.sql, elsewhere.token)).toBeUndefined();
    await page.reload();
    expect(new URL(page.url()).pathname).toBe('/account'); // this session goes on
    expect(problems.filter((problem) => !problem.includes('400'))).toEqual([]);
    await page.close();
  });

  it('says "Password set" for a first password and "Password changed" after; reset times are in words', async () => {
    const person = await createSignedInUser(db.sql, { tier: 'registered' }); // signed in with a link: no password yet
    const headers = { Accept: 'text/html', Cookie: person.cookie };
    const account = async (path = '/account') => (await fetch(`${api.url}${path}`, { headers })).text();
    const setPassword = async (fields: Record<string, string>) => {
      const html = await account();
      const token = /action="\/account\/password"[^>]*><input type="hidden" name="_csrf" value="([^"]+)"/.exec(html)![1]!;
      const answer = await fetch(`${api.url}/account/password`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token, ...fields }).toString(),
        redirect: 'manual',
      });
      expect(answer.status).toBe(303);
      return account(answer.headers.get('location')!);
    };
    const first = await setPassword({ password: 'my very first passphrase' });
    expect(first).toContain('Password set');
    expect(first).not.toMatch(/changed/i);
    const second = await setPassword({ current: 'my very first passphrase', password: 'my second passphrase' });
    expect(second).toContain('Password changed');
    // "Resets in 15809 s" no more: minutes and hours, and the clock time when it is far off.
    expect(second).not.toMatch(/<td>\d+ s<\/td>/);
    expect(second).toMatch(/<td>in (\d+ s|\d+ min|\d+ h( \d+ min)?, at \d\d:\d\d UTC)<\/td>/);
  });

  it('signs people up when REGISTRATION=open, with the registered tier, and not otherwise', async () => {
    expect((await fetch(`${api.url}/register`, { headers: { Accept: 'text/html' } })).status).toBe(404);
    const open = await startTestApi(db.sql, { REGISTRATION: 'open' });
    try {
      const { page, problems } = await openTab(browser, open.url);
      await page.goto(`${open.url}/register`);
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.goto(`${open.url}/register`);
      await page.type('#register-email', 'erin@example.org');
      await page.type('#register-password', 'a long enough passphrase');
      await Promise.all([page.waitForNavigation(), page.click('form[action="/register"] button')]);
      // Not signed in at once: a taken address must get the same answer (see 'sign-up tells nobody …').
      expect(await page.$eval('[role=status]', (element) => element.textContent)).toContain('sign in with the password you chose');
      expect(await page.$eval('#login-email', (element) => (element as HTMLInputElement).value)).toBe('erin@example.org');
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.type('#login-password', 'a long enough passphrase');
      await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
      expect(new URL(page.url()).pathname).toBe('/account');
      expect(await text(page)).toContain('Registered tier');
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      await open.close();
    }
  });

  it('answers too many sign-ins with the 429 page saying when to come back', async () => {
    const { page } = await openTab(browser, api.url);
    // Most of the allowance is used up beforehand: each real attempt costs a password hash.
    for (let attempt = 0; attempt < signInLimits.perAddress.max - 3; attempt++)
      await countSignInAttempt(db.sql, { address: '127.0.0.1', email: `guess${attempt}@example.org` });
    let status = 0;
    for (let attempt = 0; attempt < 4 && status !== 429; attempt++) {
      await page.goto(`${api.url}/login`);
      await page.type('#login-email', bob.email);
      await page.type('#login-password', 'a wrong guess, again');
      const [answer] = await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button')]);
      status = answer!.status();
    }
    expect(status).toBe(429);
    expect(await page.$eval('h1', (element) => element.textContent)).toBe('Too many requests');
    expect(await text(page)).toMatch(/Too many sign-in attempts from this address: try again after .* \(in \d+ minutes?\)/);
    expect(await text(page)).toMatch(/Try again in \d+ (s|min)\b/);
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'login-429-1280');
    await page.close();
  });
});

describe('sign-in and sign-up over HTTP', () => {
  let open: TestApi;
  let address = 0;
  beforeAll(async () => {
    // Each case from its own address (X-Forwarded-For, trusted here): the cases above used up 127.0.0.1's sign-ins.
    open = await startTestApi(db.sql, { REGISTRATION: 'open', TRUST_PROXY: 'true' });
  });
  afterAll(() => open?.close());

  /** A form's CSRF token and the cookie it is bound to, as a first visit to `path` gives them. */
  async function formOf(path: string, from: string): Promise<{ token: string; cookie: string; from: string }> {
    const page = await fetch(`${open.url}${path}`, { headers: { Accept: 'text/html', 'X-Forwarded-For': from } });
    const html = await page.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    return { token, cookie: page.headers.getSetCookie()[0]!.split(';')[0]!, from };
  }

  async function post(path: string, fields: Record<string, string>, form?: { token: string; cookie: string; from: string }) {
    const { token, cookie, from } = form ?? (await formOf(path, `198.51.100.${++address}`));
    return fetch(`${open.url}${path}`, {
      method: 'POST',
      headers: { Accept: 'text/html', 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, 'X-Forwarded-For': from },
      body: new URLSearchParams({ _csrf: token, ...fields }).toString(),
      redirect: 'manual',
    });
  }

  it.each([
    ['a tab before another slash', '/\t/evil.example', '/account'],
    ['a backslash', '/\\evil.example', '/account'],
    ['a second slash', '//evil.example', '/account'],
    ['dot segments that leave two slashes', '/.//evil.example', '/account'],
    ['an absolute URL', 'https://evil.example/', '/account'],
    ['a CR LF', '/account\r\nSet-Cookie: x=1', '/account'],
    ['a C1 control', '/account\u0085', '/account'],
    ['a line separator (U+2028)', '/summaries?tag=a\u2028b', '/summaries?tag=a%E2%80%A8b'],
    ['characters beyond Latin-1', '/summaries?tag=日本#ü', '/summaries?tag=%E6%97%A5%E6%9C%AC#%C3%BC'],
    ['a path of this site', '/summaries?tag=cooking#list', '/summaries?tag=cooking#list'],
  ])('after sign-in, next with %s goes to a path of this site, with the session cookie', async (_what, next, expected) => {
    const answer = await post('/login', { ...alice, next });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(expected);
    expect(answer.headers.getSetCookie().some((cookie) => cookie.startsWith('afterimage_session='))).toBe(true);
  });

  it('the sign-in form carries on only a safe next, and text Postgres cannot store is an error page, never a 500', async () => {
    const page = await fetch(`${open.url}/login?next=/%09/evil.example`, { headers: { Accept: 'text/html' } });
    expect(await page.text()).toContain('name="next" value="/account"');
    const refused = await post('/login', { email: 'alice\u0000@example.org', password: alice.password });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('Email: must not contain a NUL character');
  });

  it('sign-up tells nobody whether an address has an account, and leaves a taken one as it was', async () => {
    const [hashBefore] = await db.sql`select password_hash from users where email = ${alice.email}`;
    const answers = [];
    for (const email of [alice.email, 'frank@example.org']) {
      const answer = await post('/register', { email, password: 'a password chosen by someone' });
      expect(answer.headers.getSetCookie().filter((cookie) => cookie.includes('session'))).toEqual([]);
      answers.push({
        status: answer.status,
        text: (await answer.text()).replaceAll(email, 'EMAIL').replace(/value="[A-Za-z0-9_-]{43}"/, ''),
      });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]!.text).toContain('Unless this address already had an account, it has one now');
    expect(await db.sql`select password_hash from users where email = ${alice.email}`).toEqual([hashBefore]);
    expect((await post('/login', { email: 'frank@example.org', password: 'a password chosen by someone' })).status).toBe(303);
    expect((await post('/login', { email: alice.email, password: 'a password chosen by someone' })).status).toBe(401);
  });
});
