import type { Server } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApi } from '../../api/openapi.ts';
import { defineRoute, handled, reply } from '../../api/http/route.ts';
import { allRoutes } from '../../api/routes/index.ts';
import { featureName, limitName } from '../../core/schemas.ts';
import { expectConformingResponses } from '../support/conformanceProblems.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { startRoutesServer } from '../support/http-helpers.ts';

const document = buildOpenApi(allRoutes, 'test') as unknown as {
  paths: Record<string, Record<string, any>>;
  info: Record<string, unknown>;
  tags: Array<{ name: string; description?: string }>;
  components: Record<string, any>;
};
const operation = (path: string, method: string) => document.paths[path]![method]!;
const mediaTypes = (path: string, method: string, status: string) => Object.keys(operation(path, method).responses[status].content ?? {});

describe('the OpenAPI document declares what the server sends', () => {
  it('GET /api/openapi.json: the document itself, not wrapped in {data}', () => {
    const schema = operation('/api/openapi.json', 'get').responses['200'].content['application/json'].schema;
    expect(schema.properties.data).toBeUndefined();
    expect(schema.required).toEqual(expect.arrayContaining(['openapi', 'paths']));
  });

  it('GET /api/subtitles/{videoId}: SRT, WebVTT and plain text, never JSON', () => {
    expect(mediaTypes('/api/subtitles/{videoId}', 'get', '200').sort()).toEqual(['application/x-subrip', 'text/plain', 'text/vtt']);
  });

  it('POST /api/subtitles/bulk-download: the JSON envelope or a zip (bytes, no schema)', () => {
    const content = operation('/api/subtitles/bulk-download', 'post').responses['200'].content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/zip']);
    expect(content['application/zip']).toEqual({});
  });

  it('POST /api/subtitles/{videoId}/fetch: 200 when available, 202 with the poll URL when pending', () => {
    const { responses } = operation('/api/subtitles/{videoId}/fetch', 'post');
    expect(responses['200'].content['application/json'].schema.properties.data.properties.status).toMatchObject({ const: 'available' });
    const pending = responses['202'].content['application/json'].schema.properties.data;
    expect(pending.properties.status).toMatchObject({ const: 'pending' });
    expect(pending.required).toContain('pollUrl');
  });

  it('POST /api/summary/generate declares its 202; the stenogram read its 304 without a body', () => {
    expect(operation('/api/summary/generate', 'post').responses['202']).toBeDefined();
    const notModified = operation('/api/stenograms/{owner}/{videoId}', 'get').responses['304'];
    expect(notModified).toBeDefined();
    expect(notModified.content).toBeUndefined();
  });

  it('413 and 415 (INVALID_INPUT) on every operation that reads a body, and only there', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const readsBody = op.requestBody !== undefined;
        expect({ path, method, 413: '413' in op.responses, 415: '415' in op.responses }).toEqual({
          path,
          method,
          413: readsBody,
          415: readsBody,
        });
      }
    }
    expect(
      operation('/api/tiers/{name}', 'patch').responses['413'].content['application/json'].schema.allOf[1].properties.error.properties.code
        .enum,
    ).toEqual(['INVALID_INPUT']);
  });

  it('every operation may answer 500 and 503 in the envelope', () => {
    for (const item of Object.values(document.paths))
      for (const op of Object.values(item)) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['500', '503']));
  });

  it('/mcp: POST answers JSON-RPC as JSON or an event stream (202 for notifications); GET and DELETE 405 after authentication', () => {
    expect(mediaTypes('/mcp', 'post', '200').sort()).toEqual(['application/json', 'text/event-stream']);
    expect(operation('/mcp', 'post').responses['202'].content).toBeUndefined();
    for (const method of ['get', 'delete'])
      expect(Object.keys(operation('/mcp', method).responses)).toEqual(expect.arrayContaining(['401', '405']));
    const refusal = new Ajv2020({ strict: false })
      .addSchema(document as object, 'openapi')
      .compile({ $ref: 'openapi#/components/schemas/JsonRpcError' });
    expect(refusal({ jsonrpc: '2.0', error: { code: -32001, message: 'UNAUTHORIZED: unknown API key' }, id: null })).toBe(true);
    expect(refusal({ error: { code: 'UNAUTHORIZED', message: 'unknown API key' } })).toBe(false);
  });

  it('GET /api/features serves any valid key: 401 for a bad one, never 403', () => {
    const { responses } = operation('/api/features', 'get');
    expect(responses['401']).toBeDefined();
    expect(responses['403']).toBeUndefined();
  });
});

describe('the OpenAPI document declares the headers the server sends', () => {
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  const headersOf = (path: string, method: string, status: string) =>
    Object.keys(operation(path, method).responses[status].headers ?? {}).sort();
  const RATE_LIMIT = ['RateLimit-Limit', 'RateLimit-Policy', 'RateLimit-Remaining', 'RateLimit-Reset'];

  it('X-Request-Id on every response of every operation; Retry-After on every 429 and 503', () => {
    for (const { path, method, op } of operations) {
      for (const [status, response] of Object.entries(op.responses as Record<string, { headers?: Record<string, unknown> }>)) {
        expect({ path, method, status, id: response.headers?.['X-Request-Id'] }).toEqual({
          path,
          method,
          status,
          id: { $ref: '#/components/headers/X-Request-Id' },
        });
        expect({ path, method, status, retry: 'Retry-After' in (response.headers ?? {}) }).toEqual({
          path,
          method,
          status,
          retry: status === '429' || status === '503',
        });
      }
    }
  });

  it('RateLimit-* on the answers of rate-limited operations (not their 401), typed as integers; none where nothing is counted', () => {
    expect(headersOf('/api/fts', 'get', '200')).toEqual([...RATE_LIMIT, 'X-Request-Id']);
    expect(headersOf('/api/fts', 'get', '429')).toEqual([...RATE_LIMIT, 'Retry-After', 'X-Request-Id']);
    expect(headersOf('/api/fts', 'get', '401')).toEqual(['X-Request-Id']);
    expect(headersOf('/api/health', 'get', '200')).toEqual(['X-Request-Id']);
    expect(document.components.headers['RateLimit-Remaining'].schema).toEqual({ type: 'integer', minimum: 0 });
  });

  it('ETag on conditional reads with their 304, Location on the 202s that set it', () => {
    expect(headersOf('/api/subtitles/{videoId}', 'get', '200')).toContain('ETag');
    expect(headersOf('/api/stenograms/{owner}/{videoId}', 'get', '304')).toContain('ETag');
    expect(headersOf('/api/videos/{videoId}/file', 'get', '206')).toContain('ETag');
    expect(operation('/api/subtitles/{videoId}', 'get').parameters.map((parameter: { name: string }) => parameter.name)).toContain(
      'If-None-Match',
    );
    expect(operation('/api/subtitles/{videoId}/fetch', 'post').responses['202'].headers.Location).toMatchObject({
      $ref: '#/components/headers/Location',
    });
    expect(operation('/api/summary/generate', 'post').responses['202'].headers.Location).toMatchObject({
      $ref: '#/components/headers/Location',
    });
    expect(operation('/api/summary/generate', 'post').responses['200'].headers.Location).toBeUndefined();
  });

  it('top-level tags: every tag an operation uses, each described (api/tags.ts)', () => {
    const used = new Set(operations.flatMap(({ op }) => op.tags as string[]));
    expect(document.tags.map((tag) => tag.name).sort()).toEqual([...used].sort());
    for (const tag of document.tags)
      expect({ tag: tag.name, described: Boolean(tag.description) }).toEqual({ tag: tag.name, described: true });
  });

  it('/api/features and /api/tiers name every feature and limit as a required property', () => {
    const features = operation('/api/features', 'get').responses['200'].content['application/json'].schema.properties.data.properties
      .features;
    expect(features.required).toEqual(featureName.options);
    expect(Object.keys(features.properties)).toEqual(featureName.options);
    const tier = operation('/api/tiers', 'get').responses['200'].content['application/json'].schema.properties.data.properties.tiers.items;
    expect(tier.properties.limits.required).toEqual(limitName.options);
    expect(tier.properties.limits.propertyNames).toBeUndefined();
  });
});

describe("the document's input schemas refuse what the server refuses", () => {
  const ajv = new Ajv2020({ strict: false });

  it('GET /api/fts: q must hold a non-space character', () => {
    const q = ajv.compile(operation('/api/fts', 'get').parameters.find((parameter: { name: string }) => parameter.name === 'q').schema);
    expect([q(''), q('   '), q('lathe')]).toEqual([false, false, true]);
  });

  it('POST /api/subtitles/bulk-download: fileFormat only with format zip, empty query refused', () => {
    const body = ajv.compile(operation('/api/subtitles/bulk-download', 'post').requestBody.content['application/json'].schema);
    const id = 'dQw4w9WgXcQ';
    expect(body({ videoIds: [id], fileFormat: 'vtt' })).toBe(false);
    expect(body({ videoIds: [id], format: 'json', fileFormat: 'vtt' })).toBe(false);
    expect(body({ videoIds: [id], format: 'zip', fileFormat: 'vtt' })).toBe(true);
    expect(body({ videoIds: [id] })).toBe(true);
    expect(body({ videoIds: [id], query: '' })).toBe(false);
    expect(body({ videoIds: [id], format: 'pdf' })).toBe(false);
  });
});

describe('the response check every suite runs (test/support/conformance.ts)', () => {
  let db: TestDatabase;
  let server: Server;
  let url: string;
  let close: () => Promise<void>;

  const routes = [
    defineRoute({
      method: 'GET',
      path: '/check/typed',
      tag: 'Test',
      summary: 'declares a number, sends a string',
      auth: 'public',
      rateLimited: false,
      response: z.object({ n: z.number() }),
      handler: async () => ({ n: 'one' }) as never,
    }),
    defineRoute({
      method: 'GET',
      path: '/check/status',
      tag: 'Test',
      summary: 'declares 200, sends 202',
      auth: 'public',
      rateLimited: false,
      response: z.object({ n: z.number() }),
      handler: async () => reply({ n: 1 }, { status: 202 }),
    }),
    defineRoute({
      method: 'GET',
      path: '/check/media',
      tag: 'Test',
      summary: 'declares text/plain, sends text/csv',
      auth: 'public',
      rateLimited: false,
      media: { 'text/plain': z.string() },
      async handler({ res }) {
        res.writeHead(200, { 'Content-Type': 'text/csv' });
        res.end('a,b');
        return handled;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/check/fine',
      tag: 'Test',
      summary: 'as declared',
      auth: 'public',
      rateLimited: false,
      response: z.object({ n: z.number() }),
      handler: async () => ({ n: 1 }),
    }),
  ];

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ url, server, close } = await startRoutesServer(db.sql, routes));
  });
  afterAll(async () => {
    await close();
    await db.drop();
  });

  /** The problems the check found for one request, once the server has finished sending it. */
  async function problemsOf(path: string): Promise<string> {
    const response = await fetch(`${url}${path}`);
    await response.arrayBuffer();
    await new Promise<void>((resolve) => server.getConnections(() => setImmediate(resolve)));
    try {
      expectConformingResponses();
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  }

  it.each([
    ['/check/typed', /GET \/check\/typed → 200 .*the body does not match .*\/data\/n must be number/],
    ['/check/status', /status 202 is not declared for GET \/check\/status \(declared: 200, /],
    ['/check/media', /media type text\/csv is not declared for 200 of GET \/check\/media \(declared: text\/plain\)/],
    ['/check/nowhere', /^$/],
    ['/check/fine', /^$/],
  ])('%s: %s', async (path, expected) => {
    expect(await problemsOf(path)).toMatch(expected);
  });

  it("a wrong method is 405 with Allow, as the document's description says", async () => {
    const response = await fetch(`${url}/check/fine`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(await problemsOf('/check/fine')).toBe('');
  });
});
