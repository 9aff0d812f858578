import type { Sql } from '../db/database.ts';
import type { TierName } from '../schemas.ts';

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
export const ownerColumns = (sql: Sql) => sql`
  k.id as "keyId", k.key_hash as "keyHash", k.scope, k.revoked_at is not null as revoked, k.last_used_at as "lastUsedAt",
  u.id as "userId", u.email, u.is_admin as "isAdmin", u.tier, t.api_access as "apiAccess", t.max_key_scope as "maxKeyScope"`;
export const ownerJoins = (sql: Sql) => sql`join users u on u.id = k.user_id join tiers t on t.name = u.tier`;

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
