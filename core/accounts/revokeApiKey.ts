import type { Sql } from '../db/database.ts';

/** Revokes the user's active key, if any; returns the revoked key's prefix. */
export async function revokeApiKey(sql: Sql, userId: string): Promise<string | undefined> {
  const [revoked] = await sql<{ prefix: string }[]>`
    update api_keys set revoked_at = now() where user_id = ${userId} and revoked_at is null returning key_prefix as prefix`;
  return revoked?.prefix;
}
