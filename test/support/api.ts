import { cachedApiKeys } from '../../core/accounts/cachedApiKeys.ts';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createSession } from '../../core/accounts/createSession.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { loadConfig, type Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { createLogger, type Logger } from '../../core/log.ts';
import { buildServices, type Services } from '../../core/services/buildServices.ts';
import type { ScopeLabel, TierName } from '../../core/schemas.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import type { ApiDeps } from '../../api/http/route.ts';
import { allRoutes } from '../../api/routes/index.ts';
import { startApi, type ReceiveLimits } from '../../api/server.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { watchConformance } from './conformance.ts';
import { expectConformingResponses } from './conformanceProblems.ts';

export interface TestApi {
  url: string;
  config: Config;
  /** What the API was built with: a worker of the same stack uses the same (one stenogram store, one search backend). */
  services: Services;
  close(): Promise<void>;
  /** fetch relative to the API, parsing the JSON body when there is one; fails on a response the OpenAPI document does not allow. */
  call(path: string, init?: RequestInit & { key?: string }): Promise<{ status: number; headers: Headers; body: any }>;
}

/**
 * The real HTTP server on an ephemeral port, over the given database, with the services
 * `afterimage api` builds from `env` (buildServices), but no video sources unless `overrides` gives some;
 * `options` gives it another clock, or receive limits short enough to wait out.
 */
export async function startTestApi(
  sql: Sql,
  env: Record<string, string> = {},
  log: Logger = createLogger('silent'),
  overrides: Partial<Services> = {},
  { receiveLimits, ...replaced }: Pick<ApiDeps, 'clock' | 'pause'> & { receiveLimits?: ReceiveLimits } = {},
): Promise<TestApi> {
  const config = loadConfig({ DATA_DIR: '.afterimage-test', ...env });
  const services = await buildServices(config, { sql, log }, { sources: [], ...overrides });
  const tiers = cachedTiers(sql, 0);
  const hub = await createEventHub(sql, log);
  // Like the tiers, keys are read afresh on every request: tests change them behind the API's back.
  const apiKeys = await cachedApiKeys(sql, { tiers, keepMs: 0 });
  const deps = { config, sql, counterSql: sql, tiers, apiKeys, log, version: 'test', startedAt: new Date(), hub };
  const api = await startApi({ ...deps, ...services, ...replaced }, 0, '127.0.0.1', { receiveLimits });
  watchConformance(api.server, allRoutes);
  const url = `http://127.0.0.1:${api.port}`;
  return {
    url,
    config,
    services,
    close: async () => {
      await api.close();
      await hub.close();
      await apiKeys.close();
    },
    async call(path, init = {}) {
      const { key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set('X-API-Key', key);
      const response = await fetch(`${url}${path}`, { ...rest, headers });
      const text = await response.text();
      let body: unknown = text;
      if ((response.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
      expectConformingResponses();
      return { status: response.status, headers: response.headers, body };
    },
  };
}

let counter = 0;

/** A user of the given tier with a fresh key. */
export async function createKeyedUser(sql: Sql, options: { tier?: TierName; isAdmin?: boolean; scope?: ScopeLabel } = {}) {
  const user = await createUser(sql, {
    email: `user${++counter}-${Date.now()}@example.org`,
    tier: options.tier ?? 'pro',
    isAdmin: options.isAdmin ?? false,
  });
  const created = await createApiKey(sql, { userId: user.id, scope: options.scope });
  return { user, key: created.key, keyId: created.keyId };
}

/**
 * A user of the given tier with a fresh key, signed in on the website as /login leaves them: `session`
 * is the cookie (for a browser, signedInTab of test/support/browser.ts), `cookie` the header a browser sends.
 */
export async function createSignedInUser(sql: Sql, options: Parameters<typeof createKeyedUser>[1] = {}) {
  const keyed = await createKeyedUser(sql, options);
  const { token } = await createSession(sql, keyed.user.id);
  const session = { name: 'afterimage_session', value: token };
  return { ...keyed, session, cookie: `${session.name}=${session.value}` };
}
