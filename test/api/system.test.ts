import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allRoutes } from '../../api/routes/index.ts';
import { connect, type Sql } from '../../core/db/database.ts';
import { featureName, limitName } from '../../core/schemas.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { tierChanges } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { awaitFreshWindow, expectError, startApiServer, startPgProxy, type ApiResponse, type PgProxy } from '../support/http-helpers.ts';

let db: TestDatabase;
let api: TestApi;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
});
afterAll(async () => {
  await api.close();
  await db.drop();
});

/** A GET that gives up after `timeoutMs`, so a hanging server fails the test instead of stalling it. */
async function getWithin(url: string, timeoutMs = 8_000): Promise<ApiResponse> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
}

describe('GET /api/health', () => {
  beforeEach(async () => {
    await db.sql`delete from worker_heartbeats`;
    await db.sql`delete from graphile_worker._private_jobs`;
  });

  it('answers 200 with status, version, database, worker and queue', async () => {
    const response = await api.call('/api/health');
    expect(response.status).toBe(200);
    const health = response.body.data;
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(health.version).toBe('test');
    expect(health.database.ok).toBe(true);
    expect(typeof health.database.latencyMs).toBe('number');
    expect(health.queue).toEqual({ ready: 0, running: 0, scheduled: 0, failed: 0 });
    expect(['ok', 'degraded']).toContain(health.status);
    expect(health.worker).toMatchObject({ ok: expect.any(Boolean), processes: expect.any(Number) });
  });

  it('is degraded with worker.ok false when no worker has a heartbeat', async () => {
    const health = (await api.call('/api/health')).body.data;
    expect(health.status).toBe('degraded');
    expect(health.worker).toEqual({ ok: false, processes: 0, lastHeartbeatAt: null });
  });

  it('is ok once a fresh worker heartbeat exists, and degraded again when it goes stale', async () => {
    await db.sql`insert into worker_heartbeats (process_id, hostname, pid) values ('test-worker-1', 'testhost', 4242)`;
    const alive = (await api.call('/api/health')).body.data;
    expect(alive.status).toBe('ok');
    expect(alive.worker.ok).toBe(true);
    expect(alive.worker.processes).toBe(1);
    expect(Number.isNaN(Date.parse(alive.worker.lastHeartbeatAt))).toBe(false);

    await db.sql`insert into worker_heartbeats (process_id, hostname, pid) values ('test-worker-2', 'testhost', 4243)`;
    expect((await api.call('/api/health')).body.data.worker.processes).toBe(2);

    await db.sql`update worker_heartbeats set last_seen_at = now() - interval '5 minutes'`;
    const stale = (await api.call('/api/health')).body.data;
    expect(stale.status).toBe('degraded');
    expect(stale.worker.ok).toBe(false);
    expect(stale.worker.processes).toBe(0);
    expect(stale.worker.lastHeartbeatAt).not.toBeNull();
  });

  it('counts ready, running, scheduled and failed jobs', async () => {
    await db.sql`select graphile_worker.add_job('test_ready_a', '{}'::json)`;
    await db.sql`select graphile_worker.add_job('test_ready_b', '{}'::json)`;
    await db.sql`select graphile_worker.add_job('test_later', '{}'::json, run_at => now() + interval '1 hour')`;
    await db.sql`select graphile_worker.add_job('test_running', '{}'::json)`;
    await db.sql`select graphile_worker.add_job('test_failed', '{}'::json, max_attempts => 1)`;
    await db.sql`
      update graphile_worker._private_jobs set locked_at = now(), locked_by = 'test-worker'
      where task_id = (select id from graphile_worker._private_tasks where identifier = 'test_running')`;
    await db.sql`
      update graphile_worker._private_jobs set attempts = 1, last_error = 'boom'
      where task_id = (select id from graphile_worker._private_tasks where identifier = 'test_failed')`;
    expect((await api.call('/api/health')).body.data.queue).toEqual({ ready: 2, running: 1, scheduled: 1, failed: 1 });
  });

  it('is public and never rate-limited', async () => {
    const response = await api.call('/api/health');
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('GET /api/health while the database is down', () => {
  let proxy: PgProxy;
  let proxiedSql: Sql;

  beforeAll(async () => {
    proxy = await startPgProxy(db.url);
    proxiedSql = connect(proxy.url, { max: 3, role: 'test-proxied' });
  });
  afterAll(async () => {
    await proxy.stop();
    await proxiedSql.end({ timeout: 1 });
  });

  it('answers 503 SERVICE_UNAVAILABLE in the error envelope, then recovers by itself (tiers reloaded per request)', async () => {
    const proxied = await startTestApi(proxiedSql);
    try {
      expect((await getWithin(`${proxied.url}/api/health`)).status).toBe(200);
      await proxy.stop();
      const down = await getWithin(`${proxied.url}/api/health`);
      expectError(down, 503, 'SERVICE_UNAVAILABLE');
      expect(down.headers.get('retry-after')).toBe('2');
      // Other routes say the same, rather than 500.
      expectError(await getWithin(`${proxied.url}/api/features`), 503, 'SERVICE_UNAVAILABLE');
      expectError(await getWithin(`${proxied.url}/api/tiers`), 503, 'SERVICE_UNAVAILABLE');
      await proxy.start();
      // The circuit closes at its next probe (every 0.5 s).
      const up = await eventually(async () => {
        const answer = await getWithin(`${proxied.url}/api/health`);
        return answer.status === 200 ? answer : undefined;
      }, 'health to answer 200 again');
      expect(up.status).toBe(200);
      expect(up.body.data.database.ok).toBe(true);
      expect((await getWithin(`${proxied.url}/api/features`)).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it('answers 503 from the health probe itself when the tiers are cached (production cache), then recovers', async () => {
    const server = await startApiServer(proxiedSql, { tiers: cachedTiers(proxiedSql, 60_000), listenSql: db.sql });
    const url = server.url;
    try {
      expect((await getWithin(`${url}/api/health`)).status).toBe(200);
      await proxy.stop();
      const down = await getWithin(`${url}/api/health`);
      const error = expectError(down, 503, 'SERVICE_UNAVAILABLE');
      expect(error.details).toEqual({ database: { ok: false }, version: 'test' });
      expect(down.headers.get('retry-after')).toBe('2');
      expect(down.headers.get('cache-control')).toBe('no-store');
      // A second try while still down is just as quick to answer.
      expectError(await getWithin(`${url}/api/health`), 503, 'SERVICE_UNAVAILABLE');
      await proxy.start();
      const up = await eventually(async () => {
        const answer = await getWithin(`${url}/api/health`);
        return answer.status === 200 ? answer : undefined;
      }, 'health to answer 200 again');
      expect(up.status).toBe(200);
      expect(up.body.data.database.ok).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('GET /api/health does not leak where the database lives', () => {
  it('a 503 names neither the Unix socket path nor anything else of the file system', async () => {
    // The embedded database (the default deployment) is reached over a Unix socket; here it is gone.
    const socketDir = `/tmp/afterimage-gone-${process.pid}`;
    const gone = connect(`postgresql://postgres@localhost:5432/afterimage?host=${encodeURIComponent(socketDir)}`, {
      max: 1,
      role: 'test-gone',
    });
    // Tiers come from the live database (as from a warm cache), so the request reaches the health probe.
    const server = await startApiServer(gone, { tiers: cachedTiers(db.sql, 60_000), listenSql: db.sql });
    try {
      const down = await getWithin(`${server.url}/api/health`);
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(down.body)).not.toContain(socketDir);
      expect(JSON.stringify(down.body)).not.toContain('.s.PGSQL');
      expectError(down, 503, 'SERVICE_UNAVAILABLE');
    } finally {
      await server.close();
      await gone.end({ timeout: 1 });
    }
  });
});

describe('GET /api/features', () => {
  it('without a key: the anonymous tier, account null', async () => {
    const response = await api.call('/api/features');
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data.tier).toEqual({ name: 'anonymous', displayName: 'Anonymous' });
    expect(data.account).toBeNull();
    expect(data.features.apiAccess).toBe(false);
    expect(data.features.summaryGeneration).toBe(false);
    expect(Object.keys(data.features).sort()).toEqual([...featureName.options].sort());
    expect(Object.keys(data.limits).sort()).toEqual([...limitName.options].sort());
    expect(data.limits.requestsPerMinute.max).toBe(30);
  });

  it("with a key: the user's tier and account (email, isAdmin, keyScope)", async () => {
    const { key, user } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L3' });
    const data = (await api.call('/api/features', { key })).body.data;
    expect(data.tier).toEqual({ name: 'pro', displayName: 'Pro' });
    expect(data.account).toEqual({ userId: user.id, email: user.email, isAdmin: true, keyScope: 'L3' });
    expect(data.features.apiAccess).toBe(true);
    expect(data.limits.requestsPerMinute).toMatchObject({
      max: 600,
      window: 'sliding',
      windowSeconds: 60,
      countedPer: 'user',
      unit: 'requests',
    });
    expect(data.limits.apiStenogramsPerDay).toMatchObject({ max: 10, window: 'utc_day', windowSeconds: 86400, countedPer: 'key' });

    const plain = await createKeyedUser(db.sql, { tier: 'pro' });
    const plainAccount = (await api.call('/api/features', { key: plain.key })).body.data.account;
    expect(plainAccount).toEqual({ userId: plain.user.id, email: plain.user.email, isAdmin: false, keyScope: 'L4' });
  });

  it('reports used and remaining, growing by one per request', async () => {
    await awaitFreshWindow(db.sql);
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    const seen: Array<{ used: number; remaining: number; header: string | null }> = [];
    for (let i = 0; i < 3; i++) {
      const response = await api.call('/api/features', { key });
      const limit = response.body.data.limits.requestsPerMinute;
      seen.push({ used: limit.used, remaining: limit.remaining, header: response.headers.get('ratelimit-remaining') });
      expect(limit.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(limit.resetSeconds).toBeLessThanOrEqual(60);
    }
    expect(seen).toEqual([
      { used: 1, remaining: 599, header: '599' },
      { used: 2, remaining: 598, header: '598' },
      { used: 3, remaining: 597, header: '597' },
    ]);
    // Other limits are not charged by a plain request.
    const other = (await api.call('/api/features', { key })).body.data.limits;
    expect(other.channelSearchesPerHour).toMatchObject({ used: 0, remaining: 30 });
    expect(other.apiStenogramsPerDay).toMatchObject({ used: 0, remaining: 10 });
  });
});

describe('GET /api/tiers', () => {
  it('lists the 4 tiers in rank order with their features and limits, without a key', async () => {
    const response = await api.call('/api/tiers');
    expect(response.status).toBe(200);
    const tiers = response.body.data.tiers;
    expect(tiers.map((tier: { name: string }) => tier.name)).toEqual(['anonymous', 'registered', 'plus', 'pro']);
    expect(tiers.map((tier: { rank: number }) => tier.rank)).toEqual([0, 1, 2, 3]);
    for (const tier of tiers) {
      expect(Object.keys(tier.features).sort()).toEqual([...featureName.options].sort());
      expect(Object.keys(tier.limits).sort()).toEqual([...limitName.options].sort());
      for (const [name, rule] of Object.entries(tier.limits) as Array<[string, Record<string, unknown>]>) {
        expect(rule).toMatchObject({
          name,
          window: expect.stringMatching(/^(sliding|utc_day)$/),
          windowSeconds: expect.any(Number),
          countedPer: expect.stringMatching(/^(user|key)$/),
        });
      }
    }
    const byName = Object.fromEntries(tiers.map((tier: { name: string }) => [tier.name, tier]));
    expect(byName.pro).toMatchObject({ displayName: 'Pro', apiAccess: true, maxKeyScope: 'L4' });
    expect(byName.plus).toMatchObject({ apiAccess: false, maxKeyScope: 'L2' });
    expect(byName.pro.limits.requestsPerMinute.max).toBe(600);
    expect(byName.anonymous.limits.summaryGenerationsPerDay.max).toBe(0);
    expect(byName.anonymous.features.summaryGeneration).toBe(false);
    expect(byName.plus.features.stenograms).toBe(true);
  });
});

describe('GET /api/openapi.json', () => {
  let document: any;

  beforeAll(async () => {
    const response = await api.call('/api/openapi.json');
    expect(response.status).toBe(200);
    document = response.body;
  });

  it('is a public OpenAPI 3.1.0 document, not wrapped in {data}', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.data).toBeUndefined();
    expect(document.info.version).toBe('test');
  });

  it('has every path of allRoutes with its method, and the MCP endpoint served beside them', () => {
    const mcp = ['post /mcp', 'get /mcp', 'delete /mcp'];
    const expected = [
      ...allRoutes.map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([A-Za-z]+)/g, '{$1}')}`),
      ...mcp,
    ].sort();
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`))
      .sort();
    expect(documented).toEqual(expected);
    expect(expected).toContain('patch /api/tiers/{name}');
  });

  it('declares the X-API-Key and bearer security schemes, used by keyed routes', () => {
    const schemes = Object.values(document.components.securitySchemes as Record<string, Record<string, string>>);
    expect(schemes).toContainEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }));
    expect(schemes).toContainEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    const patch = document.paths['/api/tiers/{name}'].patch;
    const used = (patch.security as Array<Record<string, unknown>>).flatMap((entry) => Object.keys(entry));
    for (const name of used) expect(document.components.securitySchemes[name]).toBeDefined();
    expect(used.length).toBeGreaterThanOrEqual(2);
    expect(document.paths['/api/health'].get.security).toEqual([]);
  });

  it('generates the PATCH /api/tiers/{name} request body from the zod schema', () => {
    const schema = document.paths['/api/tiers/{name}'].patch.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(['allowances', 'apiAccess', 'features', 'limits', 'maxKeyScope']);
    expect(schema.additionalProperties).toBe(false);
    const { $schema: _ignored, ...fromZod } = z.toJSONSchema(tierChanges, { io: 'input', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
    expect(schema).toEqual(fromZod);
    const parameter = document.paths['/api/tiers/{name}'].patch.parameters.find((entry: { in: string }) => entry.in === 'path');
    expect(parameter).toMatchObject({ name: 'name', in: 'path', required: true });
    expect(parameter.schema.enum).toEqual(['anonymous', 'registered', 'plus', 'pro']);
  });
});
