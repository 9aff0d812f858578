import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { hashToken, isWellFormedToken } from '../keys.ts';
import { createSession, type NewSession } from './createSession.ts';

/**
 * Signs in with a one-time link: the link is deleted in the transaction that opens the session, so two
 * clicks (or a mail scanner and a person) never both get in. An expired link is deleted too.
 */
export async function redeemSignInLink(sql: Sql, token: string): Promise<NewSession> {
  const refused = new AppError(
    'UNAUTHORIZED',
    'This sign-in link is unknown, already used or expired; ask the operator for a password: npx afterimage users password --email E --password-stdin',
  );
  if (!isWellFormedToken(token)) throw refused;
  const session = await sql.begin(async (tx) => {
    const [link] = await tx<{ userId: string; fresh: boolean }[]>`
      delete from sign_in_links where token_hash = ${hashToken(token)} returning user_id as "userId", expires_at > now() as fresh`;
    return link?.fresh ? createSession(tx, link.userId) : undefined;
  });
  if (!session) throw refused;
  return session;
}
