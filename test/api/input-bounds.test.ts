import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/routes/index.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError } from '../support/http-helpers.ts';

let db: TestDatabase;
let api: TestApi;
let key: string;
let adminKey: string;

const INT4_MAX = 2_147_483_647;
const VIDEO = 'bndVideo001';
const CHANNEL = 'UCboundsxxxxxxxxxxxxxxxx';

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql, { tier: 'pro', scope: 'L4' }));
  adminKey = (await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' })).key;
  await db.sql`insert into channels (channel_id, title) values (${CHANNEL}, 'Bounds')`;
  await db.sql`insert into videos (video_id, channel_id, title) values (${VIDEO}, ${CHANNEL}, 'bounds video')`;
});
afterAll(async () => {
  await api.close();
  await db.drop();
});

const get = (path: string, withKey = key) => api.call(path, { key: withKey });

describe('numbers are bounded by what their column holds', () => {
  it.each([String(INT4_MAX + 1), '9007199254740991', '99999999999999999999'])(
    'subtitle version=%s is 400 naming version, not a 500',
    async (version) => {
      const error = expectError(await get(`/api/subtitles/${VIDEO}?version=${version}`), 400, 'INVALID_INPUT');
      expect(error.message).toMatch(/^version: /);
    },
  );

  it('the largest version Postgres holds is a valid request (404: no such track)', async () => {
    expectError(await get(`/api/subtitles/${VIDEO}?version=${INT4_MAX}`), 404, 'NOT_FOUND');
  });

  it('every integer parameter of the OpenAPI document has a minimum and a maximum', async () => {
    const document = (await api.call('/api/openapi.json')).body;
    const unbounded: string[] = [];
    let integers = 0;
    for (const [path, operations] of Object.entries(
      document.paths as Record<string, Record<string, { parameters?: Array<{ name: string; schema: Record<string, unknown> }> }>>,
    )) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.schema.type !== 'integer') continue;
          integers += 1;
          const { minimum, maximum } = parameter.schema as { minimum?: number; maximum?: number };
          if (minimum === undefined || maximum === undefined || maximum > INT4_MAX) unbounded.push(`${method} ${path} ${parameter.name}`);
        }
      }
    }
    expect(integers).toBeGreaterThan(5);
    expect(unbounded).toEqual([]);
  });
});

describe('decimal integers only', () => {
  it.each(['0x10', '1e1', ' 16', '16 ', '+5', '16.0', '0b11', '', '1_000', '٣'])('page=%j is 400 naming page', async (page) => {
    const error = expectError(await get(`/api/fts?q=bounds&page=${encodeURIComponent(page)}`), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(/^page: /);
  });

  it('a plain decimal page is read as written', async () => {
    const response = await get('/api/fts?q=bounds&page=2&pageSize=1');
    expect(response.status).toBe(200);
    expect(response.body.data.page).toBe(2);
  });

  it.each(['0x1', '1e0', '01.0'])('a sitemap file number %s is 400, not a file', async (file) => {
    expectError(await api.call(`/sitemaps/summaries/${file}`), 400, 'INVALID_INPUT');
  });

  it.each(['limit=0x14', 'page=1e1'])('summary lists refuse %s', async (query) => {
    expectError(await get(`/api/summary/browse?${query}`), 400, 'INVALID_INPUT');
  });
});

describe('characters Postgres cannot store', () => {
  it.each([
    ['/api/fts?q=abc%00def', 'q'],
    ['/api/fts?q=abc%00def&in=subtitles', 'q'],
    ['/api/fts?q=%22abc%00def%22', 'q'],
    ['/api/summary/browse?tag=a%00b', 'tag'],
  ])('%s is 400 naming %s', async (path, field) => {
    const error = expectError(await get(path), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(new RegExp(`^${field}: .*NUL`));
  });

  it('a NUL in a JSON body field is 400 naming the field', async () => {
    const response = await api.call('/api/subtitles/bulk-download', {
      method: 'POST',
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ videoIds: [VIDEO], query: 'a\u0000b' }),
    });
    expect(expectError(response, 400, 'INVALID_INPUT').message).toMatch(/^query: .*NUL/);
  });

  const bulk = (text: string) =>
    api.call('/api/subtitles/bulk-download', { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: text });

  it('a lone surrogate in a JSON body (which jsonb refuses) is 400 naming the field', async () => {
    const error = expectError(await bulk(`{"videoIds": ["${VIDEO}"], "query": "a\\ud800b"}`), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(/^query: .*surrogate/);
  });

  it('a NUL in a key, deep inside a body nested further than the call stack goes, is still found and named', async () => {
    const depth = 20_000;
    const error = expectError(await bulk(`{"videoIds": ${'['.repeat(depth)}{"a\\u0000": 1}${']'.repeat(depth)}}`), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(/^videoIds(\.0)+\.a.*NUL/s);
  });

  it('the query language refuses them too, for callers other than the HTTP API (MCP tools)', () => {
    expect(() => parseQuery('abc\u0000def')).toThrow(/^q: .*NUL/);
    expect(() => parseQuery('abc\ud800def')).toThrow(/^q: .*surrogate/);
  });
});

describe('unknown query parameters are refused on every route', () => {
  it('every /api route has a strict query schema, whether or not it takes parameters', () => {
    const lenient = allRoutes.filter(
      (route) => route.path.startsWith('/api/') && route.query?.safeParse({ surelyUnknownParameter: '1' }).success !== false,
    );
    expect(lenient.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  it.each([
    '/api/health?verbose=1',
    '/api/features?x=1',
    '/api/tiers?x=1',
    '/api/openapi.json?format=yaml',
    `/api/videos/${VIDEO}/status-history?limit=5`,
    `/api/subtitles/${VIDEO}/status?lang=en`,
    `/api/summary/languages?page=1`,
  ])('%s is 400 naming the parameter', async (path) => {
    const name = new URL(path, 'http://x').searchParams.keys().next().value!;
    const error = expectError(await get(path), 400, 'INVALID_INPUT');
    expect(error.message).toBe(`${name}: unknown parameter`);
  });

  it('the public pages for browsers and crawlers ignore their query string (shared links carry tracking parameters)', async () => {
    expect((await api.call('/sitemap.xml?utm_source=feed')).status).toBe(200);
  });
});

describe('a route that takes a JSON body needs one', () => {
  const patch = (body: string | undefined, contentType?: string) =>
    api.call('/api/tiers/plus', {
      method: 'PATCH',
      key: adminKey,
      ...(contentType ? { headers: { 'Content-Type': contentType } } : {}),
      ...(body === undefined ? {} : { body }),
    });

  it('PATCH /api/tiers/:name with no body is 400 naming the body', async () => {
    const error = expectError(await patch(undefined), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(/^body: /);
  });

  it('an empty body is 400 too, with or without a Content-Type', async () => {
    expectError(await patch('', 'application/json'), 400, 'INVALID_INPUT');
    expectError(await patch(''), 400, 'INVALID_INPUT');
  });

  it('an empty object changes nothing and answers the tier', async () => {
    const response = await patch('{}', 'application/json');
    expect(response.status).toBe(200);
    expect(response.body.data.name).toBe('plus');
  });

  it('a POST whose body is optional (stenogram generation) still takes none', async () => {
    const response = await api.call(`/api/stenograms/${VIDEO}/generate`, { method: 'POST', key });
    expect(response.status).not.toBe(400);
  });

  it('the OpenAPI document says which bodies are required', async () => {
    const paths = (await api.call('/api/openapi.json')).body.paths;
    expect(paths['/api/tiers/{name}'].patch.requestBody.required).toBe(true);
    expect(paths['/api/stenograms/{videoId}/generate'].post.requestBody.required).toBe(false);
  });
});
