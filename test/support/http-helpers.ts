import { request } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import { createServer, connect as netConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { allRoutes } from '../../api/routes/index.ts';
import type { ApiDeps, Route } from '../../api/http/route.ts';
import { createApi, startApi } from '../../api/server.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { cachedApiKeys } from '../../core/accounts/cachedApiKeys.ts';
import { loadConfig } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import type { Tier } from '../../core/schemas.ts';
import { cachedTiers, loadTiers, type TierCache } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { watchConformance } from './conformance.ts';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** Signs that a response leaks internals: stack frames or source file paths, in any string it holds. */
export function expectNoInternals(body: unknown): void {
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object')
      Object.entries(value).forEach(([key, inner]) => {
        strings.push(key);
        walk(inner);
      });
  };
  walk(body);
  for (const text of strings) {
    expect(text).not.toMatch(/\bat\s.*\(?(?:file:\/\/|node:|\/)[^\s()]*:\d+:\d+/);
    expect(text).not.toMatch(/\n\s*at\s/);
    expect(text).not.toMatch(/(file:\/\/|\/work\/|\/home\/|\/tmp\/|node_modules|\.ts:\d+|\.m?js:\d+)/);
  }
}

/** The error envelope `{error: {code, message}}` with exactly this status and code, and no internals. */
export function expectError(response: ApiResponse, status: number, code: string): { code: string; message: string; details?: unknown } {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.error.message.length).toBeGreaterThan(0);
  expect(Object.keys(response.body).sort()).toEqual(['error']);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expectNoInternals(response.body);
  return response.body.error;
}

/** Every tier as it is now, to put back after a test changed one. */
export async function snapshotTiers(sql: Sql): Promise<Tier[]> {
  return loadTiers(sql);
}

export async function restoreTiers(sql: Sql, snapshot: Tier[]): Promise<void> {
  for (const tier of snapshot) {
    await updateTier(sql, tier.name, {
      apiAccess: tier.apiAccess,
      maxKeyScope: tier.maxKeyScope,
      features: tier.features,
      limits: Object.fromEntries(Object.values(tier.limits).map((rule) => [rule.name, rule.max])),
      allowances: Object.fromEntries(Object.values(tier.allowances).map((rule) => [rule.name, rule.max])),
    });
  }
}

/**
 * Waits, when the database clock is within `marginSeconds` of the end of the current `windowSeconds`
 * bucket, until the next bucket has begun: a test that counts a handful of units then never straddles
 * two buckets (where the sliding-window estimate legitimately rounds the previous bucket down).
 */
export async function awaitFreshWindow(sql: Sql, windowSeconds = 60, marginSeconds = 3): Promise<void> {
  const [row] = await sql<{ now: number }[]>`select extract(epoch from clock_timestamp())::float8 as now`;
  const intoWindow = row!.now % windowSeconds;
  const left = windowSeconds - intoWindow;
  if (left < marginSeconds) await new Promise((done) => setTimeout(done, Math.ceil(left * 1000) + 50));
}

/** A plain HTTP request from a chosen local address (127.0.0.0/8 is all loopback on Linux). */
export function requestFrom(
  url: string,
  options: { localAddress: string; headers?: Record<string, string>; method?: string },
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, localAddress: options.localAddress, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          let body: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text) body = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers, body });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

export interface PgProxy {
  /** The database URL through the proxy (TCP on 127.0.0.1). */
  url: string;
  port: number;
  /** Cuts every connection and stops listening: the database looks down. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

/**
 * A TCP proxy in front of the test PostgreSQL (Unix socket when the URL has `?host=/socket/dir`,
 * else host and port), so a test can take the database away from a connection pool and bring it back.
 */
export async function startPgProxy(targetUrl: string): Promise<PgProxy> {
  const parsed = new URL(targetUrl);
  const socketDir = parsed.searchParams.get('host');
  const pgPort = Number(parsed.port || 5432);
  const target = socketDir ? { path: `${socketDir}/.s.PGSQL.${pgPort}` } : { host: parsed.hostname, port: pgPort };
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const listening = createServer((client) => {
        const upstream = netConnect(target);
        sockets.add(client);
        sockets.add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        port = (listening.address() as AddressInfo).port;
        server = listening;
        resolve();
      });
    });

  await start();
  const proxied = new URL(targetUrl);
  proxied.searchParams.delete('host');
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return {
    url: proxied.toString(),
    port,
    start,
    async stop() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      const closing = server;
      server = undefined;
      if (closing) await new Promise<void>((done) => closing.close(() => done()));
    },
  };
}

/** What createApi/startApi need, built as startTestApi does; `close` ends what it opened (the event hub, the key cache's LISTEN). */
async function buildApiDeps(
  sql: Sql,
  options: { tiers?: TierCache; keepKeysMs?: number; listenSql?: Sql; env?: Record<string, string> } = {},
): Promise<{ deps: ApiDeps; close(): Promise<void> }> {
  const log = createLogger('silent');
  const config = loadConfig({ DATA_DIR: '.afterimage-test', ...options.env });
  const hub = await createEventHub(options.listenSql ?? sql, log);
  const tiers = options.tiers ?? cachedTiers(sql, 0);
  const apiKeys = await cachedApiKeys(options.listenSql ?? sql, { tiers, keepMs: options.keepKeysMs ?? 0 });
  return {
    deps: {
      config,
      sql,
      counterSql: sql,
      tiers,
      apiKeys,
      log,
      version: 'test',
      startedAt: new Date(),
      hub,
      ...(await buildServices(config, { sql, log }, { sources: [] })),
      openStreams: new Set(),
    },
    close: async () => {
      await hub.close();
      await apiKeys.close();
    },
  };
}

/**
 * The real API like startTestApi, but with a chosen tier cache (startTestApi reloads tiers on every
 * request; production keeps them for seconds), keys kept `keepKeysMs` (production: until a change is
 * announced) and its LISTEN (the event hub, the key cache) on a database of the caller's choice, so `sql`
 * may point at a database that is down.
 */
export async function startApiServer(
  sql: Sql,
  options: { tiers: TierCache; keepKeysMs?: number; listenSql?: Sql; env?: Record<string, string> },
): Promise<{ url: string; close(): Promise<void> }> {
  const { deps, close } = await buildApiDeps(sql, options);
  const api = await startApi(deps, 0, '127.0.0.1');
  watchConformance(api.server, allRoutes);
  return {
    url: `http://127.0.0.1:${api.port}`,
    async close() {
      api.server.closeAllConnections();
      await api.close();
      await close();
    },
  };
}

/** An API of the given routes only (test routes that throw or break the document), its responses checked against their document. */
export async function startRoutesServer(sql: Sql, routes: Route[]): Promise<{ url: string; server: HttpServer; close(): Promise<void> }> {
  const { deps, close } = await buildApiDeps(sql);
  const app = createApi(deps, routes);
  await new Promise<void>((resolve) => app.listen({ port: 0, host: '127.0.0.1' }, () => resolve()));
  const server = app.server as HttpServer;
  watchConformance(server, routes);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await close();
    },
  };
}

/**
 * Posts a page's form as a browser would, from client `address` (the API must trust X-Forwarded-For):
 * the page is read once per path for its CSRF cookie and field, which every later post reuses.
 */
export function formPoster(baseUrl: string): (path: string, fields: Record<string, string>, address: string) => Promise<Response> {
  const forms = new Map<string, Promise<{ cookie: string; csrf: string }>>();
  const formOf = (path: string, address: string) => {
    if (!forms.has(path))
      forms.set(
        path,
        fetch(`${baseUrl}${path}`, { headers: { Accept: 'text/html', 'X-Forwarded-For': address } }).then(async (page) => ({
          csrf: /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!,
          cookie: page.headers.get('set-cookie')!.split(';')[0]!,
        })),
      );
    return forms.get(path)!;
  };
  return async (path, fields, address) => {
    const { cookie, csrf } = await formOf(path, address);
    return fetch(`${baseUrl}${path}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      headers: { Accept: 'text/html', Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': address },
    });
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  raw: Buffer;
  text: string;
}

export interface RawRequestOptions {
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  localAddress?: string;
}

/** One request as a client that decodes nothing itself: the bytes on the wire, and the text they decode to. */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const coding = res.headers['content-encoding'];
          const decoded = coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body;
          const headers = Object.fromEntries(
            Object.entries(res.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]),
          );
          resolve({ status: res.statusCode ?? 0, headers, raw: body, text: decoded.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
