import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { browserFetch, CorsRefusal } from '../support/crossOriginFetch.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

const APP = 'https://app.example.org';
const OTHER_APP = 'http://localhost:5173';
const STRANGER = 'https://evil.example';

let db: TestDatabase;
let api: TestApi;
let closed: TestApi;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000 } });
  // HOST 0.0.0.0: /mcp's DNS-rebinding rule allows no loopback page then, only listed origins.
  api = await startTestApi(db.sql, { CORS_ORIGINS: ` ${APP}, ${OTHER_APP} `, HOST: '0.0.0.0' });
  closed = await startTestApi(db.sql, {});
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await api?.close();
  await closed?.close();
  await db?.drop();
});

const preflight = (base: string, path: string, origin: string, method: string, headers: string) =>
  fetch(`${base}${path}`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers },
  });

const names = (value: string | null) => (value ?? '').split(',').map((name) => name.trim().toLowerCase());
const EXPOSED = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'retry-after',
  'etag',
  'location',
  'x-request-id',
];

describe('CORS preflights, answered before authentication', () => {
  it('a listed origin: 204 with the methods and headers the API and EventSource use, cacheable, no credentials', async () => {
    for (const origin of [APP, OTHER_APP]) {
      const answer = await preflight(api.url, '/api/fts', origin, 'GET', 'x-api-key,last-event-id,x-request-id');
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      expect(names(answer.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['get', 'post', 'patch', 'delete']));
      expect(names(answer.headers.get('access-control-allow-headers'))).toEqual(
        expect.arrayContaining(['x-api-key', 'authorization', 'content-type', 'last-event-id', 'x-request-id']),
      );
      expect(Number(answer.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect(names(answer.headers.get('vary'))).toContain('origin');
    }
  });

  it("/mcp: 204 with the MCP transport's headers, though no key is sent", async () => {
    const answer = await preflight(
      api.url,
      '/mcp',
      APP,
      'POST',
      'authorization,content-type,mcp-protocol-version,mcp-session-id,last-event-id',
    );
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(names(answer.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['post', 'get', 'delete']));
    expect(names(answer.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']),
    );
  });

  it('an origin not listed, or no CORS_ORIGINS at all: no Access-Control-Allow-* header', async () => {
    for (const [base, origin] of [
      [api.url, STRANGER],
      [api.url, `${APP}:8443`],
      [api.url, APP.replace('https', 'http')],
      [closed.url, APP],
    ] as const) {
      for (const path of ['/api/fts', '/mcp']) {
        const answer = await preflight(base, path, origin, 'GET', 'x-api-key');
        expect(answer.status).toBe(204);
        expect([...answer.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
        expect(names(answer.headers.get('vary'))).toContain('origin');
      }
    }
  });
});

describe('CORS on answers: the grant, the exposed headers, errors included', () => {
  it('a listed origin may read a keyed answer and its RateLimit and X-Request-Id headers; another origin gets no grant', async () => {
    const page = browserFetch(APP);
    const answer = await page(`${api.url}/api/features`, { headers: { 'X-API-Key': key } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(answer.headers.get('x-request-id')).toBeTruthy();
    const raw = await fetch(`${api.url}/api/features`, { headers: { 'X-API-Key': key, Origin: APP } });
    expect(names(raw.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(EXPOSED));
    expect(names(raw.headers.get('vary'))).toContain('origin');
  });

  it('errors carry the grant, so the page can read their envelope (401, 404, 405, 400)', async () => {
    const page = browserFetch(APP);
    const unauthorized = await page(`${api.url}/api/fts?q=lathe`, { headers: { 'X-API-Key': `tsk_${'x'.repeat(48)}` } });
    expect(unauthorized.status).toBe(401);
    expect((await unauthorized.json()).error).toMatchObject({ code: 'UNAUTHORIZED', message: 'unknown API key' });
    const missing = await page(`${api.url}/api/no-such-thing`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('NOT_FOUND');
    const wrongMethod = await page(`${api.url}/api/fts`, { method: 'DELETE', headers: { 'X-API-Key': key } });
    expect(wrongMethod.status).toBe(405);
    const invalid = await page(`${api.url}/api/fts?q=lathe&nope=1`, { headers: { 'X-API-Key': key } });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error.message).toContain('nope: unknown parameter');

    // An origin not listed gets the answer without any grant: its browser keeps it from the page.
    const raw = await fetch(`${api.url}/api/features`, { headers: { 'X-API-Key': key, Origin: STRANGER } });
    expect(raw.status).toBe(200);
    expect([...raw.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    await expect(browserFetch(STRANGER)(`${api.url}/api/features`, { headers: { 'X-API-Key': key } })).rejects.toBeInstanceOf(CorsRefusal);
    await expect(browserFetch(APP)(`${closed.url}/api/features`)).rejects.toBeInstanceOf(CorsRefusal);
    // Pages outside /api and /mcp are not for scripts: no grant there.
    const sitemap = await fetch(`${api.url}/sitemap.xml`, { headers: { Origin: APP } });
    expect(sitemap.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('/mcp from a listed origin', () => {
  it("the MCP SDK client, driven through a browser's CORS rules, lists the tools; Mcp-Session-Id is exposed", async () => {
    const preflights: Array<{ url: string; status: number }> = [];
    const client = new Client({ name: 'browser-page', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
        fetch: browserFetch(APP, preflights),
      }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('search_videos');
    await client.close();
    expect(preflights.length).toBeGreaterThan(0);
    expect(preflights.every((answer) => answer.status === 204)).toBe(true);
    const raw = await fetch(`${api.url}/mcp`, { method: 'POST', headers: { Origin: APP, 'Content-Type': 'application/json' }, body: '{}' });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('access-control-allow-origin')).toBe(APP);
    expect(names(raw.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['mcp-session-id', 'www-authenticate', ...EXPOSED]),
    );

    // An origin not listed is still refused by /mcp's DNS-rebinding rule, with no grant.
    const refused = await fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: {
        Origin: STRANGER,
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS is checked at start-up', () => {
  const problemsOf = (value: string) => {
    try {
      loadConfig({ CORS_ORIGINS: value });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    return [];
  };

  it('each entry must be an origin as a browser sends it; each problem is named with the fix', () => {
    expect(loadConfig({}).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000,' }).CORS_ORIGINS).toEqual([
      'https://a.example',
      'http://localhost:3000',
    ]);
    expect(problemsOf('https://a.example/')[0]).toMatch(
      /^CORS_ORIGINS: "https:\/\/a\.example\/" is not an origin as a browser sends it: write https:\/\/a\.example /,
    );
    expect(problemsOf('https://A.example:443')[0]).toContain('write https://a.example');
    expect(problemsOf('*')[0]).toContain('"*" is not accepted');
    expect(problemsOf('ftp://files.example')[0]).toContain('is not an http(s) origin');
    expect(problemsOf('app.example.org')[0]).toContain('expected scheme and host');
    expect(problemsOf('https://ok.example,https://b.example/path')).toHaveLength(1);
  });
});
