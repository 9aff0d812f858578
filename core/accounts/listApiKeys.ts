import type { Sql } from '../db/database.ts';
import { scopeName, type ScopeLabel } from '../schemas.ts';

export interface ApiKeyListing {
  prefix: string;
  email: string;
  tier: string;
  isAdmin: boolean;
  scope: ScopeLabel;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Every key ever issued (or one user's), newest first: prefixes only, never a key or its hash. */
export async function listApiKeys(sql: Sql, options: { includeRevoked: boolean; userId?: string }): Promise<ApiKeyListing[]> {
  const rows = await sql<(Omit<ApiKeyListing, 'scope'> & { scope: number })[]>`
    select k.key_prefix as prefix, u.email, u.tier, u.is_admin as "isAdmin", k.scope,
      to_json(k.created_at)#>>'{}' as "createdAt", to_json(k.last_used_at)#>>'{}' as "lastUsedAt", to_json(k.revoked_at)#>>'{}' as "revokedAt"
    from api_keys k join users u on u.id = k.user_id
    where (${options.includeRevoked} or k.revoked_at is null) and (${options.userId ?? null}::uuid is null or k.user_id = ${options.userId ?? null}::uuid)
    order by k.created_at desc`;
  return rows.map((row) => ({ ...row, scope: scopeName(row.scope) }));
}
