/**
 * API keys and the other bearer tokens: their forms and hashes, a key found with its owner (by the
 * key's hash, or by a stream token it minted), a key's use recorded, and stream tokens minted.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Sql } from './db/database.ts';
import type { TierName } from './schemas.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_SHAPE = /^tsk_[A-Za-z0-9]{48}$/;

/** `tsk_` and 48 characters drawn uniformly from 62 (about 286 bits of entropy). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 48; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `tsk_${body}`;
}

export const isWellFormedApiKey = (value: string) => KEY_SHAPE.test(value);
/** Keys and other bearer tokens are stored only as their SHA-256: long random secrets need no slow hash. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest();
export const hashApiKey = (key: string) => hashToken(key);
/** A session's or a sign-in link's secret: 256 random bits, URL- and cookie-safe (43 characters). */
export const generateToken = () => randomBytes(32).toString('base64url');
export const isWellFormedToken = (value: string) => /^[A-Za-z0-9_-]{43}$/.test(value);
/** `sst_` and a token: a stream token bound to one event stream (mintStreamToken, below). */
const generateStreamToken = () => `sst_${generateToken()}`;
export const isWellFormedStreamToken = (value: string) => value.startsWith('sst_') && isWellFormedToken(value.slice(4));
/** The part of a key that may be shown in listings and logs. */
export const apiKeyPrefix = (key: string) => key.slice(0, 10);

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface ApiKeyOwner {
  keyId: string;
  keyHash: Uint8Array;
  scope: number;
  revoked: boolean;
  lastUsedAt: Date | null;
  userId: string;
  email: string;
  isAdmin: boolean;
  tier: TierName;
  apiAccess: boolean;
  maxKeyScope: number;
}

/** The columns of ApiKeyOwner, selected from `api_keys k` joined as ownerJoins joins it. */
const ownerColumns = (sql: Sql) => sql`
  k.id as "keyId", k.key_hash as "keyHash", k.scope, k.revoked_at is not null as revoked, k.last_used_at as "lastUsedAt",
  u.id as "userId", u.email, u.is_admin as "isAdmin", u.tier, t.api_access as "apiAccess", t.max_key_scope as "maxKeyScope"`;
const ownerJoins = (sql: Sql) => sql`join users u on u.id = k.user_id join tiers t on t.name = u.tier`;

/** The key with this SHA-256 hash and its owner, revoked or not. */
export async function findApiKey(sql: Sql, keyHash: Uint8Array): Promise<ApiKeyOwner | undefined> {
  const [row] = await sql<ApiKeyOwner[]>`
    select ${ownerColumns(sql)}
    from api_keys k ${ownerJoins(sql)}
    where k.key_hash = ${keyHash as Buffer}`;
  return row;
}

/**
 * Records a use of the key to the second (`last_used_at` is the second of the last use): a key used
 * many times a second is written once that second, so reads do not turn every request into a write.
 */
export async function touchApiKey(sql: Sql, keyId: string): Promise<void> {
  await sql`
    update api_keys set last_used_at = date_trunc('second', now())
    where id = ${keyId} and (last_used_at is null or last_used_at < date_trunc('second', now()))`;
}

/** A stream token as stored: the key that minted it (with its owner), the stream it opens, when it expires. */
export interface StreamTokenGrant extends ApiKeyOwner {
  streamPath: string;
  expiresAt: Date;
  expired: boolean;
}

/** The token with this SHA-256 hash, expired or not, its key revoked or not (the caller says which refusal applies). */
export async function findStreamToken(sql: Sql, tokenHash: Uint8Array): Promise<StreamTokenGrant | undefined> {
  const [row] = await sql<StreamTokenGrant[]>`
    select ${ownerColumns(sql)}, s.stream_path as "streamPath", s.expires_at as "expiresAt", s.expires_at <= now() as expired
    from stream_tokens s join api_keys k on k.id = s.key_id ${ownerJoins(sql)}
    where s.token_hash = ${tokenHash as Buffer}`;
  return row;
}

/** How long a stream token opens its stream: long enough for a page to connect and reconnect after a blip, short enough that a leaked URL is soon worthless. */
export const STREAM_TOKEN_MINUTES = 10;
/** Expired tokens are kept this long, so using one says "expired" rather than "unknown", then swept. */
const EXPIRED_KEPT = '1 day';

export interface MintedStreamToken {
  token: string;
  expiresAt: Date;
}

/**
 * A new token that opens `streamPath` as the key `keyId` for STREAM_TOKEN_MINUTES. Only its hash is
 * stored; the token itself exists only in this answer. Tokens long expired are swept in the same statement.
 */
export async function mintStreamToken(sql: Sql, keyId: string, streamPath: string): Promise<MintedStreamToken> {
  const token = generateStreamToken();
  const [row] = await sql<{ expiresAt: Date }[]>`
    with swept as (delete from stream_tokens where expires_at < now() - ${EXPIRED_KEPT}::interval)
    insert into stream_tokens (token_hash, key_id, stream_path, expires_at)
    values (${hashToken(token)}, ${keyId}, ${streamPath}, now() + make_interval(mins => ${STREAM_TOKEN_MINUTES}))
    returning expires_at as "expiresAt"`;
  return { token, expiresAt: row!.expiresAt };
}
