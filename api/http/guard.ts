/**
 * The one guard chain of REST routes, web pages, and MCP tool calls, resource reads and prompts:
 * authentication gives the caller (a key, a session, a stream token or an anonymous visitor), then access
 * (admin, scope, feature: 403), then the charge (every limit's units with the request's count in one
 * statement, its RateLimit headers, its 429), then the work.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeyCache } from '../../core/accounts/cachedApiKeys.ts';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { Charge } from '../../core/generations/generationKind.ts';
import {
  type ApiKeyOwner,
  findStreamToken,
  hashApiKey,
  hashToken,
  isWellFormedApiKey,
  isWellFormedStreamToken,
  sameHash,
  STREAM_TOKEN_MINUTES,
  touchApiKey,
} from '../../core/keys.ts';
import type { Logger } from '../../core/log.ts';
import { remembered } from '../../core/remembered.ts';
import { scopeLevel, type FeatureName, type LimitName, type LimitRule, type ScopeLabel, type Tier } from '../../core/schemas.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import { consumeQuotas, describeReset, refundQuotas, type CountedUnits, type QuotaDecision } from '../../core/usage/consumeQuota.ts';
import { hashedSubject } from '../../core/usage/hashedSubject.ts';

/**
 * Who is asking: a visitor without an account (counted per client address), an API key, or a person
 * signed in on the website (a session). A session acts with its user's whole standing: tier, features
 * and limits as for a key, but no key scope (scopes limit what a key handed to a program may do).
 */
export type Caller =
  | { kind: 'anonymous'; tier: Tier; subject: string; address: string }
  | { kind: 'key'; tier: Tier; subject: string; userId: string; email: string; isAdmin: boolean; keyId: string; scope: number }
  | { kind: 'session'; tier: Tier; subject: string; userId: string; email: string; isAdmin: boolean; sessionId: string };

/** The caller's user (whose private items they see and own), or null for an anonymous visitor. */
export const callerUserId = (caller: Caller): string | null => (caller.kind === 'anonymous' ? null : caller.userId);

export type RouteAuth = 'public' | 'optional' | 'key';

/**
 * The key from `X-API-Key`, or from `Authorization: Bearer`; undefined when neither header is sent.
 * Both naming different keys is refused: which one the caller meant to be charged is a guess.
 */
function extractApiKey(req: IncomingMessage): string | undefined {
  const header = req.headers['x-api-key'];
  const fromHeader = typeof header === 'string' && header.trim() ? header.trim() : undefined;
  const authorization = req.headers.authorization?.trim();
  if (!authorization) return fromHeader;
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  // X-API-Key wins over an Authorization of another scheme (a proxy's Basic credentials).
  if (fromHeader && !match) return fromHeader;
  if (!match) throw new AppError('UNAUTHORIZED', 'the Authorization header must be "Bearer <API key>"');
  if (fromHeader && fromHeader !== match[1]) {
    throw new AppError('INVALID_INPUT', 'X-API-Key and Authorization: Bearer name different API keys; send one key, in either header');
  }
  return match[1];
}

/**
 * Anonymous callers are counted per client address, as a stable uuid-shaped subject; remembered, since a
 * hash on every request costs as much as a no-op route's whole work.
 */
export const anonymousSubject = remembered((address: string) => hashedSubject(`anonymous:${address}`), 10_000);

export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy
    ? String(req.headers['x-forwarded-for'] ?? '')
        .split(',')[0]
        ?.trim()
    : '';
  return forwarded || req.socket.remoteAddress || 'unknown';
}

/** What authentication reads: an API process's own deps (ApiDeps) fit. */
export interface AuthDeps {
  sql: Sql;
  tiers: TierCache;
  /** Key lookups, kept by this process until a change to keys, users or tiers is announced. */
  apiKeys: ApiKeyCache;
  log: Logger;
  config: Pick<Config, 'TRUST_PROXY'>;
}

/** The second (of this process's clock) each key's use was last recorded in: one write a second at most. */
const lastRecorded = new Map<string, number>();

/**
 * Records that the key was used, before the request goes on, so that a listing read after the answer
 * shows this use (`keys list`, the account page). A failure costs the record, not the request.
 */
async function recordKeyUse(deps: AuthDeps, keyId: string): Promise<void> {
  const second = Math.floor(Date.now() / 1000);
  if (lastRecorded.get(keyId) === second) return;
  if (lastRecorded.size > 10_000) lastRecorded.clear();
  lastRecorded.set(keyId, second);
  await touchApiKey(deps.sql, keyId).catch((error) => deps.log.warn('could not record key use', { err: error }));
}

/** A stream token given in the URL of an event stream (`?token=`), with the path it was given on. */
export interface StreamTokenUse {
  token: string;
  path: string;
}

/**
 * Who is calling. The key is looked up by its SHA-256 hash, so the time taken does not depend on how
 * much of a guessed key is right, and the stored hash is compared in constant time.
 */
export async function authenticate(
  deps: AuthDeps,
  req: IncomingMessage,
  auth: RouteAuth,
  needsApiAccess = true,
  streamToken?: StreamTokenUse,
): Promise<Caller> {
  if (auth !== 'public') return identify(deps, req, auth, needsApiAccess, streamToken);
  // Public routes count a valid key against its owner, but a stale or wrong key never blocks them
  // (a monitor with an old key still gets its health answer).
  try {
    return await identify(deps, req, auth, needsApiAccess);
  } catch (error) {
    // Two different keys is a malformed request, not a stale key: refused on public routes too.
    if (!(error instanceof AppError) || error.code === 'INVALID_INPUT') throw error;
    return anonymousCaller(deps, req, await deps.tiers.get());
  }
}

/** A visitor without an account: the anonymous tier, counted per client address. */
export function anonymousCaller(deps: Pick<AuthDeps, 'config'>, req: IncomingMessage, tiers: Map<string, Tier>): Caller {
  const address = clientAddress(req, deps.config.TRUST_PROXY);
  return { kind: 'anonymous', tier: tiers.get('anonymous')!, subject: anonymousSubject(address), address };
}

async function identify(
  deps: AuthDeps,
  req: IncomingMessage,
  auth: RouteAuth,
  needsApiAccess: boolean,
  streamToken?: StreamTokenUse,
): Promise<Caller> {
  const key = extractApiKey(req);
  const tiers = await deps.tiers.get();
  if (streamToken) {
    if (key !== undefined) throw new AppError('INVALID_INPUT', 'send either an API key or a stream token (?token=), not both');
    return keyCaller(deps, await streamTokenOwner(deps.sql, streamToken), tiers, needsApiAccess);
  }
  if (key === undefined) {
    if (auth === 'key')
      throw new AppError(
        'API_KEY_REQUIRED',
        'this endpoint needs an API key: send it as "X-API-Key: tsk_…" or "Authorization: Bearer tsk_…"',
      );
    return anonymousCaller(deps, req, tiers);
  }
  if (!isWellFormedApiKey(key)) throw new AppError('UNAUTHORIZED', 'malformed API key: keys are "tsk_" followed by 48 letters and digits');
  const hash = hashApiKey(key);
  const owner = await deps.apiKeys.find(hash);
  if (!owner || !sameHash(owner.keyHash, hash)) throw new AppError('UNAUTHORIZED', 'unknown API key');
  if (owner.revoked) throw new AppError('UNAUTHORIZED', 'this API key was revoked; use the key that replaced it or create a new one');
  return keyCaller(deps, owner, tiers, needsApiAccess);
}

const MINT_HINT = 'mint one for this stream with POST /api/stream-tokens {"stream": "<stream path>"}';

/**
 * The key a stream token acts as: one minted for this very stream, not expired, by a key not revoked
 * since. The token is never echoed in a message (it is a secret, and messages reach logs and pages).
 */
async function streamTokenOwner(sql: Sql, use: StreamTokenUse): Promise<ApiKeyOwner> {
  if (!isWellFormedStreamToken(use.token))
    throw new AppError('UNAUTHORIZED', `malformed stream token: tokens are "sst_" followed by 43 letters, digits, - or _; ${MINT_HINT}`);
  const hash = hashToken(use.token);
  const grant = await findStreamToken(sql, hash);
  if (!grant) throw new AppError('UNAUTHORIZED', `unknown stream token; ${MINT_HINT}`);
  if (grant.revoked)
    throw new AppError(
      'UNAUTHORIZED',
      'the API key that minted this stream token was revoked; mint a new token with the key that replaced it',
    );
  if (grant.expired)
    throw new AppError(
      'UNAUTHORIZED',
      `this stream token expired at ${grant.expiresAt.toISOString()} (tokens last ${STREAM_TOKEN_MINUTES} minutes); ${MINT_HINT}`,
    );
  if (grant.streamPath !== use.path)
    throw new AppError('UNAUTHORIZED', `this stream token opens ${grant.streamPath}, not ${use.path}; ${MINT_HINT}`);
  return grant;
}

/** The caller a valid key (or a stream token minted by one) stands for: its owner, tier and scope as they are now. */
async function keyCaller(deps: AuthDeps, owner: ApiKeyOwner, tiers: Map<string, Tier>, needsApiAccess: boolean): Promise<Caller> {
  const tier = tiers.get(owner.tier)!;
  if (needsApiAccess && !owner.apiAccess) {
    throw new AppError(
      'FORBIDDEN',
      `API access is not enabled for this account: the ${tier.displayName} tier has no API access (it needs Pro)`,
    );
  }
  await recordKeyUse(deps, owner.keyId);
  return {
    kind: 'key',
    tier,
    subject: owner.userId,
    userId: owner.userId,
    email: owner.email,
    isAdmin: owner.isAdmin,
    keyId: owner.keyId,
    scope: Math.min(owner.scope, owner.maxKeyScope),
  };
}

/** What a route or an MCP tool asks of its caller beyond a valid key. */
export interface Access {
  admin?: boolean | undefined;
  scope?: ScopeLabel | undefined;
  feature?: FeatureName | undefined;
}

/** The scope every administrator action needs of a key, whatever else the route asks. */
export const ADMIN_SCOPE: ScopeLabel = 'L4';

/**
 * Refuses (403 FORBIDDEN or FEATURE_DISABLED) a caller whose key, account or tier falls short of `access`.
 * Scopes are a key's alone: a signed-in person is limited by their account and tier only. Administration
 * through a key needs an L4 one (ADMIN_SCOPE), one rule for every administrator route, tool and page.
 */
export function checkAccess(caller: Caller, access: Access, what = 'this endpoint'): void {
  if (access.admin && (caller.kind === 'anonymous' || !caller.isAdmin))
    throw new AppError('FORBIDDEN', `${what} is for administrators only`);
  if (caller.kind === 'key') {
    const scope = access.admin ? ADMIN_SCOPE : access.scope;
    if (scope && caller.scope < scopeLevel(scope)) {
      throw new AppError('FORBIDDEN', `${what} needs an API key with ${scope}+ scope; this key has L${caller.scope}`);
    }
  }
  if (access.feature && !caller.tier.features[access.feature]) {
    throw new AppError('FEATURE_DISABLED', `${access.feature} is not part of the ${caller.tier.displayName} tier`, {
      details: { feature: access.feature },
    });
  }
}

const per = (rule: LimitRule) =>
  rule.window === 'utc_day'
    ? 'per day (UTC)'
    : (({ 60: 'per minute', 3600: 'per hour', 86400: 'per day' } as Record<number, string>)[rule.windowSeconds] ??
      `per ${rule.windowSeconds} s`);

/** RateLimit header fields (IETF httpapi draft) describing the quota that governed this request. */
function rateLimitHeaders(decision: QuotaDecision): Record<string, string> {
  if (decision.max === null) return {};
  return {
    'RateLimit-Limit': String(decision.max),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.allowed ? decision.resetSeconds : decision.retryAfterSeconds),
    'RateLimit-Policy': `${decision.max};w=${decision.windowSeconds}`,
  };
}

/** Whose counter a limit uses: the key's for per-key limits, else the user's (or the address's). */
export const quotaSubject = (caller: Caller, rule: LimitRule) =>
  rule.countedPer === 'key' && caller.kind === 'key' ? caller.keyId : caller.subject;

/** Administrators are not limited by the tiers' quotas on their own instance: counted and shown, never refused. */
export const limitsEnforcedFor = (caller: Caller) => caller.kind === 'anonymous' || !caller.isAdmin;

/**
 * Counts units of several limits for the caller (per user, per key, or per address when anonymous) in
 * one statement, in order: each is counted only if every one before it was, and the first that cannot
 * take its units refuses the request (429 RATE_LIMITED, with its headers). The RateLimit headers of the
 * last limit counted go on the response, when there is one (an MCP call's answer is not an HTTP response
 * of its own). An administrator's units are counted against the tier's numbers but never refused. `at`
 * replaces the database clock (tests of a window's end).
 */
async function chargeQuotas(
  sql: Sql,
  caller: Caller,
  charges: ReadonlyArray<{ name: LimitName; units?: number }>,
  res: Pick<ServerResponse, 'setHeader'> | undefined,
  at?: Date,
): Promise<QuotaDecision[]> {
  const rules = charges.map(({ name }) => caller.tier.limits[name]);
  const enforced = limitsEnforcedFor(caller);
  const decisions = await consumeQuotas(
    sql,
    charges.map(({ units }, index) => ({ subject: quotaSubject(caller, rules[index]!), rule: rules[index]!, units, enforced })),
    at,
  );
  for (const [index, decision] of decisions.entries()) {
    if (!decision.allowed) throw refusal(caller, charges[index]!.name, decision, charges[index]!.units ?? 1, at);
    for (const [header, value] of Object.entries(rateLimitHeaders(decision))) res?.setHeader(header, value);
  }
  return decisions;
}

function refusal(caller: Caller, name: LimitName, decision: QuotaDecision, units: number, at?: Date): AppError {
  const rule = caller.tier.limits[name];
  const retryAfter = decision.retryAfterSeconds!;
  const needs = units > 1 ? `this request needs ${units} ${rule.unit} and ${decision.remaining ?? 0} remain; ` : '';
  const message =
    rule.max === 0
      ? `Limit reached: the ${caller.tier.displayName} tier allows no ${rule.unit} (${name})`
      : units > (rule.max ?? Number.MAX_SAFE_INTEGER)
        ? `Limit reached: this request needs ${units} ${rule.unit}, more than the ${rule.max} ${per(rule)} the ${caller.tier.displayName} tier allows (${name}); ask for fewer`
        : `Limit reached: ${needs}${rule.max} ${rule.unit} ${per(rule)} (${name}); resets at ${describeReset(retryAfter, at?.getTime())} (in ${retryAfter} s)`;
  return new AppError('RATE_LIMITED', message, {
    headers: { ...rateLimitHeaders(decision), 'Retry-After': String(retryAfter) },
    details: { limit: name, max: rule.max, retryAfterSeconds: retryAfter, ...(units > 1 ? { units, remaining: decision.remaining } : {}) },
  });
}

/** The per-minute limit that counts a request: requestsPerMinute, or pageRequestsPerMinute for public pages. */
export type RequestLimit = Extract<LimitName, 'requestsPerMinute' | 'pageRequestsPerMinute'>;

/** What a piece of work asks of its caller (access) and what it may cost (its request limit, the limits it charges). */
export interface Guarded extends Access {
  /** Counted against the caller's request limit (default true). */
  rateLimited?: boolean | undefined;
  /** The limit that counts the request (default requestsPerMinute). */
  requestLimit?: RequestLimit | undefined;
  /**
   * The limits the work may charge. With any, the request's count waits for the first charge and is made
   * in the same statement; charging a limit not listed here is a fault of the code.
   */
  charges?: readonly LimitName[] | undefined;
}

/**
 * Counts `units` of one of the declared limits, with the request when it is not counted yet, in one
 * statement; 429 RATE_LIMITED when refused. Answers where the units went (undefined for 0 units, which
 * counts only the request: a handler that writes its answer itself charges before writing).
 */
export type ChargeUnits = (name: LimitName, units?: number, at?: Date) => Promise<Charge | undefined>;

/** What the work gets of the guard: its charge, and the request's count for an answer it writes itself. */
export interface GuardedRequest {
  charge: ChargeUnits;
  /** Counts the request now if nothing has yet; called before writing an answer that counts. */
  countRequest(): Promise<void>;
  /** The answer is a 304 Not Modified: the request counts nothing. */
  waiveRequest(): void;
}

export interface GuardOptions {
  /** How a refusal names the work ("this endpoint", "the get_video tool"). */
  what?: string;
  /** The HTTP response of the work, for the RateLimit headers; absent for MCP calls. */
  res?: Pick<ServerResponse, 'setHeader' | 'headersSent'>;
  /** A cacheable read: the request is counted once its answer is known not to be a 304, which counts nothing. */
  countsLate?: boolean;
}

/**
 * Whether a failure gives the units charged back: the caller's input was wrong or what it named does not
 * exist (an unknown channel found only by asking the sources), so nothing was delivered. Other failures
 * keep them: a 5xx after a charge paid for an attempt (a query that ran into its timeout, a source that
 * did not answer), and giving it back would let a caller who can make its requests fail late repeat
 * them for free.
 */
const givesBack = (error: unknown) => error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'INVALID_INPUT');

/**
 * Runs `work` behind the guard chain. Every charge is one statement: the request's count with the units of
 * the limit the work charges, or the request alone (before the work when it charges nothing and is not a
 * cacheable read; after it when it ended without charging, its 429 then replacing the work's answer, so
 * every answer is the one counting first would have given).
 *
 * Charges are counted on `counterSql`, the counters' own autocommit pool, at once: concurrent requests
 * cannot overshoot a quota, and a rollback of the work's transaction does not undo them. A request that
 * ends in NOT_FOUND or INVALID_INPUT after a charge gets the units back in one more statement; its
 * request count stays (the rate limit counts every request that reached its work, 400s and 404s
 * included). Any other failure keeps the charge (see givesBack); a generation whose job fails gives its
 * unit back from the job (runGenerationJob of core/generations/lifecycle.ts).
 */
export async function guarded<T>(
  deps: { counterSql: Sql },
  caller: Caller,
  rules: Guarded,
  work: (request: GuardedRequest) => Promise<T>,
  options: GuardOptions = {},
): Promise<T> {
  checkAccess(caller, rules, options.what);
  const counters = deps.counterSql;
  const requestLimit = rules.requestLimit ?? 'requestsPerMinute';
  const rateLimited = rules.rateLimited ?? true;
  let requestPending = rateLimited && ((rules.charges?.length ?? 0) > 0 || options.countsLate === true);
  if (rateLimited && !requestPending) await chargeQuotas(counters, caller, [{ name: requestLimit }], options.res);
  const charged: CountedUnits[] = [];

  // Methods, not named arrow functions: tsx names each of those as it is made, on every request.
  const request: GuardedRequest = {
    async charge(name, units = 1, at) {
      if (!rules.charges?.includes(name)) {
        throw new Error(`${options.what ?? 'this endpoint'} charged ${name}, which its guard does not declare in charges`);
      }
      const charges = [...(requestPending ? [{ name: requestLimit }] : []), ...(units > 0 ? [{ name, units }] : [])];
      requestPending = false;
      if (charges.length === 0) return undefined;
      const decisions = await chargeQuotas(counters, caller, charges, options.res, at);
      if (units === 0) return undefined;
      const receipt = { subject: quotaSubject(caller, caller.tier.limits[name]), windowStart: decisions.at(-1)!.windowStart! };
      charged.push({ ...receipt, limit: name, units });
      return receipt;
    },
    async countRequest() {
      if (!requestPending) return;
      requestPending = false;
      try {
        await chargeQuotas(counters, caller, [{ name: requestLimit }], options.res);
      } catch (error) {
        // An answer already on its way cannot be replaced by the refusal (a handler that wrote without charging).
        if (!options.res?.headersSent) throw error;
      }
    },
    waiveRequest() {
      requestPending = false;
    },
  };

  let result: T;
  try {
    result = await work(request);
  } catch (error) {
    if (givesBack(error)) await refundQuotas(counters, charged.splice(0));
    await request.countRequest();
    throw error;
  }
  await request.countRequest();
  return result;
}
