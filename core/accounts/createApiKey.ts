import type { TransactionSql } from 'postgres';
import { AppError } from '../errors.ts';
import { apiKeyPrefix, generateApiKey, hashApiKey } from '../keys.ts';
import type { Sql } from '../db/database.ts';
import { scopeLevel, scopeName, type ScopeLabel } from '../schemas.ts';

export interface CreatedApiKey {
  key: string;
  keyId: string;
  userId: string;
  scope: ScopeLabel;
  prefix: string;
  revokedKeyId: string | null;
}

/**
 * Issues a key for a user, revoking the active one in the same transaction (regeneration):
 * the old key stops working at the instant the new one exists. Without a scope, the tier's maximum.
 */
export function createApiKey(sql: Sql, input: { userId: string; scope?: ScopeLabel }): Promise<CreatedApiKey> {
  return sql.begin((tx) => issueApiKey(tx, input));
}

/** createApiKey inside a transaction the caller already holds. */
export async function issueApiKey(tx: TransactionSql, input: { userId: string; scope?: ScopeLabel }): Promise<CreatedApiKey> {
  const key = generateApiKey();
  const [owner] = await tx<{ maxKeyScope: number; tier: string }[]>`
    select t.max_key_scope as "maxKeyScope", u.tier from users u join tiers t on t.name = u.tier
    where u.id = ${input.userId} for update of u`;
  if (!owner) throw new AppError('NOT_FOUND', 'no such user');
  const scope = input.scope ? scopeLevel(input.scope) : owner.maxKeyScope;
  if (scope > owner.maxKeyScope) {
    throw new AppError(
      'INVALID_INPUT',
      `scope ${scopeName(scope)} exceeds ${scopeName(owner.maxKeyScope)}, the most the ${owner.tier} tier allows`,
    );
  }
  // A transaction that waited for the lock above may have begun (now()) before the key it revokes was made.
  const [revoked] = await tx<{ id: string }[]>`
    update api_keys set revoked_at = greatest(now(), created_at) where user_id = ${input.userId} and revoked_at is null returning id`;
  const [created] = await tx<{ id: string }[]>`
    insert into api_keys (user_id, key_hash, key_prefix, scope)
    values (${input.userId}, ${hashApiKey(key)}, ${apiKeyPrefix(key)}, ${scope}) returning id`;
  return {
    key,
    keyId: created!.id,
    userId: input.userId,
    scope: scopeName(scope),
    prefix: apiKeyPrefix(key),
    revokedKeyId: revoked?.id ?? null,
  };
}
