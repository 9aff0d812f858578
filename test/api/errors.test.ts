import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../api/http/route.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError, expectNoInternals, startRoutesServer, type ApiResponse } from '../support/http-helpers.ts';

let db: TestDatabase;
let api: TestApi;
let adminKey: string;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql, { BODY_LIMIT_BYTES: '2048' });
  adminKey = (await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' })).key;
});
afterAll(async () => {
  await api.close();
  await db.drop();
});

const patchPro = (body: BodyInit | undefined, contentType: string | undefined, extra: RequestInit = {}) =>
  api.call('/api/tiers/pro', {
    method: 'PATCH',
    key: adminKey,
    headers: contentType ? { 'Content-Type': contentType } : {},
    body,
    ...extra,
  });

const requestsPerMinuteOfPro = async () =>
  (
    await db.sql<{ max: number | null }[]>`select max_count as max from tier_limits where tier = 'pro' and limit_name = 'requestsPerMinute'`
  )[0]!.max;

describe('unknown paths and methods', () => {
  // '/' is the web app's home page; a program asking for a path that is neither API nor page gets the envelope.
  it.each(['/api/nothing', '/api', '/no-such-page', '/api/tiers/pro/extra', '/api/healthz'])(
    '%s is 404 NOT_FOUND in the error envelope',
    async (path) => {
      const response = await api.call(path);
      const error = expectError(response, 404, 'NOT_FOUND');
      expect(error.message).toContain(path);
      expect(response.headers.get('allow')).toBeNull();
    },
  );

  it.each([
    ['DELETE', '/api/health', 'GET'],
    ['POST', '/api/features', 'GET'],
    ['PUT', '/api/tiers', 'GET'],
    ['GET', '/api/tiers/pro', 'PATCH'],
    ['DELETE', '/api/tiers/plus', 'PATCH'],
    ['POST', '/api/openapi.json', 'GET'],
  ])('%s %s is 405 with code NOT_FOUND and Allow: %s', async (method, path, allow) => {
    const response = await api.call(path, { method });
    expectError(response, 405, 'NOT_FOUND');
    expect(response.headers.get('allow')).toBe(allow);
  });

  it('a wrong method with a trailing slash still finds the path (405, not 404)', async () => {
    const response = await api.call('/api/health/', { method: 'DELETE' });
    expectError(response, 405, 'NOT_FOUND');
    expect(response.headers.get('allow')).toBe('GET');
  });
});

describe('request bodies', () => {
  it('malformed JSON is 400 INVALID_INPUT and changes nothing', async () => {
    for (const body of ['{"limits": {', '{limits: 1}', 'nul', '{"a":1}}']) {
      const error = expectError(await patchPro(body, 'application/json'), 400, 'INVALID_INPUT');
      expect(error.message).toMatch(/JSON/);
    }
    expect(await requestsPerMinuteOfPro()).toBe(600);
  });

  it('a body with a non-JSON content type is 415 INVALID_INPUT', async () => {
    const body = JSON.stringify({ limits: { requestsPerMinute: 5 } });
    expectError(await patchPro(body, 'text/plain'), 415, 'INVALID_INPUT');
    expectError(await patchPro(body, 'application/x-www-form-urlencoded'), 415, 'INVALID_INPUT');
    expectError(await patchPro(new Blob([body]), undefined), 415, 'INVALID_INPUT');
    expect(await requestsPerMinuteOfPro()).toBe(600);
  });

  it('JSON with a charset parameter or a +json type is accepted', async () => {
    expect((await patchPro(JSON.stringify({}), 'application/json; charset=utf-8')).status).toBe(200);
    expect((await patchPro(JSON.stringify({}), 'application/merge-patch+json')).status).toBe(200);
  });

  it('a body above BODY_LIMIT_BYTES is 413 INVALID_INPUT (declared length)', async () => {
    const body = JSON.stringify({ limits: { requestsPerMinute: 5 }, padding: 'x'.repeat(3000) });
    const error = expectError(await patchPro(body, 'application/json'), 413, 'INVALID_INPUT');
    expect(error.message).toContain('2048');
    expect(await requestsPerMinuteOfPro()).toBe(600);
  });

  it('a chunked body above BODY_LIMIT_BYTES is 413 INVALID_INPUT too', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(1000));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await patchPro(stream, 'application/json', { duplex: 'half' } as RequestInit);
    expectError(response, 413, 'INVALID_INPUT');
  });

  it('a body of exactly the limit is read (the limit is inclusive)', async () => {
    const base = JSON.stringify({ limits: { requestsPerMinute: 600 } });
    const body = base + ' '.repeat(2048 - Buffer.byteLength(base));
    expect(Buffer.byteLength(body)).toBe(2048);
    expect((await patchPro(body, 'application/json')).status).toBe(200);
  });
});

describe('malformed URLs', () => {
  it('malformed percent-encoding in a path parameter is 400, never 500', async () => {
    const response = await api.call('/api/tiers/%E0%A4%A', {
      method: 'PATCH',
      key: adminKey,
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expectError(response, 400, 'INVALID_INPUT');
  });

  it.each(['/api/%E0%A4%A', '/api/tiers/%E0%A4%A/x', '/%', '/api/%ZZ'])(
    'malformed percent-encoding in an unknown path (%s) is 404, never 500',
    async (path) => {
      expectError(await api.call(path), 404, 'NOT_FOUND');
    },
  );

  it('malformed percent-encoding on a known path with another method answers an error below 500', async () => {
    for (const path of ['/api/tiers/%E0%A4%A', '/api/tiers/%']) {
      const response = await api.call(path);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.body.error.code).toBe('NOT_FOUND');
      expectNoInternals(response.body);
    }
  });

  it('malformed percent-encoding in the query string does not break the request', async () => {
    // The parameters are read (and, being unknown to this route, named), not a 500 or a dropped connection.
    const response = await api.call('/api/features?x=%E0%A4%A&y=%');
    expect(expectError(response, 400, 'INVALID_INPUT').message).toBe('x: unknown parameter; y: unknown parameter');
  });

  it('a parameter given twice is refused by name on every route and page; one the schema ignores may repeat', async () => {
    const browse = await api.call('/api/summary/browse?limit=5&limit=6&page=1&page=1', { key: adminKey });
    expect(expectError(browse, 400, 'INVALID_INPUT').message).toBe('limit: give it once; page: give it once');
    expect(expectError(await api.call('/api/features?x=1&x=2'), 400, 'INVALID_INPUT').message).toBe('x: unknown parameter');
    const page = await fetch(`${api.url}/search?q=lathe&q=radio`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(400);
    expect(await page.text()).toMatch(/q: give it once/i);
    const summaries = await fetch(`${api.url}/summaries?page=1&page=2`, { headers: { Accept: 'text/html' } });
    expect(summaries.status).toBe(400);
    expect(await summaries.text()).toMatch(/page: give it once/i);
    // A page that ignores what it does not read ignores it repeated too (tracking parameters of a shared link).
    const shared = await fetch(`${api.url}/login?utm_source=a&utm_source=b`, { headers: { Accept: 'text/html' } });
    expect(shared.status).toBe(200);
  });
});

describe('request ids', () => {
  const everyKind: Array<[string, () => Promise<ApiResponse>]> = [
    ['200', () => api.call('/api/health')],
    ['400', () => patchPro('{', 'application/json')],
    ['401', () => api.call('/api/features', { key: 'tsk_bad' })],
    ['404', () => api.call('/api/nothing')],
    ['405', () => api.call('/api/health', { method: 'POST' })],
    ['413', () => patchPro('x'.repeat(3000), 'application/json')],
  ];

  it.each(everyKind)('a %s response has a generated X-Request-Id (a UUID) when none was sent', async (_status, send) => {
    const response = await send();
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('two requests get two different generated ids', async () => {
    const first = await api.call('/api/health');
    const second = await api.call('/api/health');
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });

  it.each(['abc-123', 'trace.id:42_x', 'A'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e'])(
    'a valid incoming X-Request-Id (%s) is echoed back',
    async (id) => {
      expect((await api.call('/api/health', { headers: { 'X-Request-Id': id } })).headers.get('x-request-id')).toBe(id);
      expect((await api.call('/api/nothing', { headers: { 'X-Request-Id': id } })).headers.get('x-request-id')).toBe(id);
      expect((await api.call('/api/features', { headers: { 'X-Request-Id': id }, key: 'tsk_bad' })).headers.get('x-request-id')).toBe(id);
    },
  );

  it.each([
    ['300 characters', 'a'.repeat(300)],
    ['129 characters', 'a'.repeat(129)],
    ['spaces', 'has some spaces'],
    ['a slash', 'a/b'],
    ['a newline-like escape', 'a%0Ab'],
    ['quotes', '"quoted"'],
  ])('an invalid incoming X-Request-Id (%s) is replaced by a generated UUID', async (_label, id) => {
    const response = await api.call('/api/health', { headers: { 'X-Request-Id': id } });
    const answered = response.headers.get('x-request-id');
    expect(answered).not.toBe(id);
    expect(answered).toMatch(UUID);
  });
});

describe('no internals in responses', () => {
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const boom = (thrown: () => unknown) =>
      defineRoute({
        method: 'GET',
        path: '',
        tag: 'Test',
        summary: 'throws',
        auth: 'public',
        rateLimited: false,
        response: z.unknown(),
        async handler() {
          throw thrown();
        },
      });
    const routes = [
      { ...boom(() => new Error(`boom in ${import.meta.url}`)), path: '/boom/error' },
      { ...boom(() => Object.assign(new TypeError('cannot read x of undefined'), { code: 'ERR_SOMETHING' })), path: '/boom/type' },
      { ...boom(() => 'a thrown string'), path: '/boom/string' },
    ];
    ({ url, close } = await startRoutesServer(db.sql, routes));
  });
  afterAll(async () => close());

  it.each(['/boom/error', '/boom/type', '/boom/string'])(
    'an unexpected failure (%s) is 500 INTERNAL_ERROR quoting the request id, without stack or message',
    async (path) => {
      const response = await fetch(`${url}${path}`, { headers: { 'X-Request-Id': 'trace-500' } });
      const text = await response.text();
      const body = JSON.parse(text);
      expectError({ status: response.status, headers: response.headers, body }, 500, 'INTERNAL_ERROR');
      expect(body.error.message).toContain('trace-500');
      expect(text).not.toContain('boom');
      expect(text).not.toContain('cannot read');
      expect(text).not.toContain('ERR_SOMETHING');
      expect(text).not.toContain('a thrown string');
      expect(response.headers.get('x-request-id')).toBe('trace-500');
    },
  );

  it('error responses from the real routes carry no stack frames or file paths', async () => {
    const responses = await Promise.all([
      api.call('/api/nothing'),
      api.call('/api/health', { method: 'DELETE' }),
      patchPro('{', 'application/json'),
      patchPro('x', 'text/plain'),
      patchPro('x'.repeat(3000), 'application/json'),
      patchPro(JSON.stringify({ limits: { requestsPerMinute: 'x' } }), 'application/json'),
      api.call('/api/features', { key: 'tsk_bad' }),
      api.call('/api/features', { headers: { Authorization: 'Basic abc' } }),
      api.call('/api/tiers/pro', { method: 'PATCH' }),
      api.call('/api/tiers/%E0%A4%A', { method: 'PATCH', key: adminKey }),
    ]);
    for (const response of responses) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expectNoInternals(response.body);
    }
  });
});
