import type { IncomingMessage } from 'node:http';
import type { ApiKeyCache } from '../../core/accounts/cachedApiKeys.ts';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
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
import type { Tier } from '../../core/schemas.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import { hashedSubject } from '../../core/usage/hashedSubject.ts';
import { remembered } from '../../core/remembered.ts';

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
