import type { Queryable } from '../db/database.ts';
import { generateToken, hashToken } from '../keys.ts';

const SIGN_IN_LINK_MINUTES = 60;

/**
 * A one-time sign-in for a user without a password yet (the administrator on first start): the token
 * goes in /login/once/<token>; only its hash is stored, and it works once, within the hour.
 */
export async function createSignInLink(sql: Queryable, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = generateToken();
  const [link] = await sql<{ expiresAt: Date }[]>`
    insert into sign_in_links (token_hash, user_id, expires_at)
    values (${hashToken(token)}, ${userId}, now() + ${SIGN_IN_LINK_MINUTES} * interval '1 minute')
    returning expires_at as "expiresAt"`;
  return { token, expiresAt: link!.expiresAt };
}
