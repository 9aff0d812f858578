import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedApiKeys, type ApiKeyCache } from '../../core/accounts/cachedApiKeys.ts';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createSession } from '../../core/accounts/createSession.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { endSession } from '../../core/accounts/endSession.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { AppError } from '../../core/errors.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { checkAccess, anonymousSubject, type Caller, quotaSubject } from '../../api/http/guard.ts';
import { checkFormToken, formToken } from '../../api/http/csrf.ts';
import { sessionCookie } from '../../api/http/session.ts';
import { identifyVisitor } from '../../api/web/visitor.ts';
import { callerUsage } from '../../api/actions/usage.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
let apiKeys: ApiKeyCache;
const plain = loadConfig({});
const https = loadConfig({ PUBLIC_URL: 'https://archive.example.org' });

beforeAll(async () => {
  db = await createTestDatabase();
  apiKeys = await cachedApiKeys(db.sql);
});
afterAll(async () => {
  await apiKeys?.close();
  await db?.drop();
});

/** A request as the server sees it: headers and the peer's address. */
const request = (headers: Record<string, string> = {}, address = '127.0.0.9') =>
  ({ headers, socket: { remoteAddress: address } }) as unknown as IncomingMessage;

/** A response that only collects its headers. */
function response() {
  const headers = new Map<string, unknown>();
  return {
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    setHeader: (name: string, value: unknown) => void headers.set(name.toLowerCase(), value),
    headers,
  } as unknown as Pick<ServerResponse, 'getHeader' | 'setHeader'> & { headers: Map<string, unknown> };
}

const deps = (config = plain) => ({ sql: db.sql, tiers: cachedTiers(db.sql, 0), apiKeys, config, log: createLogger('silent') });
const cookiesOf = (res: ReturnType<typeof response>) => (res.headers.get('set-cookie') as string[] | undefined) ?? [];

describe('identifyVisitor', () => {
  it('makes the signed-in person a session caller with their tier, limits and account', async () => {
    const user = await createUser(db.sql, { email: 'reader@example.org', tier: 'plus', isAdmin: false });
    const session = await createSession(db.sql, user.id);
    const caller = await identifyVisitor(deps(), request({ cookie: `theme=dark; afterimage_session=${session.token}` }));
    expect(caller).toMatchObject({
      kind: 'session',
      subject: user.id,
      userId: user.id,
      email: 'reader@example.org',
      isAdmin: false,
      sessionId: session.sessionId,
    });
    expect(caller.tier.name).toBe('plus');
    // Every limit is counted against the user, as with their key.
    expect(quotaSubject(caller, caller.tier.limits.apiStenogramsPerDay)).toBe(user.id);
    const usage = await callerUsage(db.sql, caller);
    expect(usage.account).toEqual({ userId: user.id, email: 'reader@example.org', isAdmin: false, keyScope: null });
    expect(usage.tier.name).toBe('plus');
  });

  it('takes no API key as a credential: a key without a session is an anonymous visit, beside a session it changes nothing', async () => {
    const user = await createUser(db.sql, { email: 'keyed-admin@example.org', tier: 'pro', isAdmin: true });
    const { key } = await createApiKey(db.sql, { userId: user.id, scope: 'L1' });
    const keyed: Array<Record<string, string>> = [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }, { 'x-api-key': 'tsk_stale' }];
    for (const headers of keyed)
      expect(await identifyVisitor(deps(), request(headers))).toMatchObject({ kind: 'anonymous', address: '127.0.0.9' });
    const session = await createSession(db.sql, user.id);
    const both = await identifyVisitor(deps(), request({ 'x-api-key': key, cookie: `afterimage_session=${session.token}` }));
    expect(both).toMatchObject({ kind: 'session', userId: user.id, sessionId: session.sessionId });
  });

  it('reads the __Host- cookie when PUBLIC_URL is https, and only that one', async () => {
    const user = await createUser(db.sql, { email: 'secure@example.org', tier: 'registered', isAdmin: false });
    const session = await createSession(db.sql, user.id);
    expect((await identifyVisitor(deps(https), request({ cookie: `__Host-afterimage_session=${session.token}` }))).kind).toBe('session');
    expect((await identifyVisitor(deps(https), request({ cookie: `afterimage_session=${session.token}` }))).kind).toBe('anonymous');
  });

  it('treats no cookie, an unknown one and an ended session as an anonymous visitor counted per address (X-Forwarded-For only with TRUST_PROXY)', async () => {
    const user = await createUser(db.sql, { email: 'gone@example.org', tier: 'pro', isAdmin: true });
    const session = await createSession(db.sql, user.id);
    await endSession(db.sql, session.token);
    for (const cookie of [
      undefined,
      'afterimage_session=',
      `afterimage_session=${'x'.repeat(43)}`,
      `afterimage_session=${session.token}`,
    ]) {
      const caller = await identifyVisitor(
        deps(),
        request({ ...(cookie ? { cookie } : {}), 'x-forwarded-for': '203.0.113.5' }, '10.0.0.1'),
      );
      expect(caller).toMatchObject({ kind: 'anonymous', address: '10.0.0.1', subject: anonymousSubject('10.0.0.1') });
      expect(caller.tier.name).toBe('anonymous');
    }
    const proxied = await identifyVisitor(
      deps(loadConfig({ TRUST_PROXY: 'true' })),
      request({ 'x-forwarded-for': '203.0.113.5, 10.0.0.2' }, '10.0.0.1'),
    );
    expect(proxied).toMatchObject({ kind: 'anonymous', address: '203.0.113.5' });
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/ and lasts a month; Secure with the __Host- prefix when PUBLIC_URL is https', () => {
    expect(sessionCookie(plain, 'TOKEN')).toBe('afterimage_session=TOKEN; Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax');
    expect(sessionCookie(https, 'TOKEN')).toBe('__Host-afterimage_session=TOKEN; Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax; Secure');
    expect(sessionCookie(plain)).toBe('afterimage_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
  });
});

describe('form tokens (CSRF)', () => {
  const refusedWith = (check: () => void) => {
    try {
      check();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('FORBIDDEN');
      return (error as AppError).message;
    }
    throw new Error('the form was accepted');
  };

  it('for a signed-in visitor: derived from the session, accepted for its own action only, refused when missing or from another session', () => {
    const signedIn = request({ cookie: 'afterimage_session=SESSION-ONE' });
    const res = response();
    const token = formToken(signedIn, res, plain, '/account/keys');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookiesOf(res)).toEqual([]); // no cookie of its own needed
    expect(formToken(signedIn, response(), plain, '/account/keys')).toBe(token);
    checkFormToken(signedIn, plain, '/account/keys', token);

    expect(refusedWith(() => checkFormToken(signedIn, plain, '/account/keys', undefined))).toMatch(
      /missing or out of date.*Reload the page/,
    );
    refusedWith(() => checkFormToken(signedIn, plain, '/account/keys', ''));
    refusedWith(() => checkFormToken(signedIn, plain, '/logout', token));
    refusedWith(() => checkFormToken(request({ cookie: 'afterimage_session=SESSION-TWO' }), plain, '/account/keys', token));
    refusedWith(() => checkFormToken(signedIn, plain, '/account/keys', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`));
  });

  it('for a visitor not signed in: a double-submit cookie (HttpOnly, SameSite=Lax) set with the form, and the field bound to it', () => {
    const first = response();
    const token = formToken(request(), first, plain, '/login');
    const [cookie] = cookiesOf(first);
    expect(cookie).toMatch(/^afterimage_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
    const withCookie = request({ cookie: cookie!.split(';')[0]! });
    checkFormToken(withCookie, plain, '/login', token);
    // Another browser's cookie, or none at all, does not go with this field.
    const other = response();
    formToken(request(), other, plain, '/login');
    refusedWith(() => checkFormToken(request({ cookie: cookiesOf(other)[0]!.split(';')[0]! }), plain, '/login', token));
    expect(refusedWith(() => checkFormToken(request(), plain, '/login', token))).toMatch(/sent no cookie/);
    // The cookie is set once, not with every form.
    const again = response();
    expect(formToken(withCookie, again, plain, '/login')).toBe(token);
    expect(cookiesOf(again)).toEqual([]);
  });

  it('keeps the Set-Cookie headers the response already had', () => {
    const res = response();
    res.setHeader('Set-Cookie', 'afterimage_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
    formToken(request(), res, https, '/login');
    expect(cookiesOf(res)).toHaveLength(2);
    expect(cookiesOf(res)[1]).toMatch(/^__Host-afterimage_csrf=.*; Secure$/);
  });
});

describe('checkAccess for people', () => {
  it('refuses administrators-only pages to anonymous visitors and to people who are not administrators', async () => {
    const tiers = await cachedTiers(db.sql, 0).get();
    const anonymous: Caller = {
      kind: 'anonymous',
      tier: tiers.get('anonymous')!,
      subject: anonymousSubject('127.0.0.1'),
      address: '127.0.0.1',
    };
    const person = (isAdmin: boolean): Caller => ({
      kind: 'session',
      tier: tiers.get('pro')!,
      subject: 'u',
      userId: 'u',
      email: 'p@example.org',
      isAdmin,
      sessionId: 's',
    });
    expect(() => checkAccess(anonymous, { admin: true }, 'the users page')).toThrow(/the users page is for administrators only/);
    expect(() => checkAccess(person(false), { admin: true })).toThrow(/administrators only/);
    checkAccess(person(true), { admin: true });
  });

  it('applies tiers and features to a signed-in person as to a key, but no key scope', async () => {
    const tiers = await cachedTiers(db.sql, 0).get();
    const registered: Caller = {
      kind: 'session',
      tier: tiers.get('registered')!,
      subject: 'u',
      userId: 'u',
      email: 'r@example.org',
      isAdmin: false,
      sessionId: 's',
    };
    // The registered tier's keys may be L1 at most, yet a person of that tier may generate summaries on the website.
    checkAccess(registered, { feature: 'summaryGeneration', scope: 'L2' });
    expect(() => checkAccess(registered, { feature: 'stenograms' })).toThrow(/stenograms is not part of the Registered tier/);
  });
});
