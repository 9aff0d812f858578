import type { Queryable } from '../db/database.ts';
import { generateToken, hashToken } from '../keys.ts';

/** A session ends after a week without use, and a month after it began whatever the use. */
export const SESSION_IDLE_DAYS = 7;
export const SESSION_MAX_DAYS = 30;

export interface NewSession {
  token: string;
  sessionId: string;
  userId: string;
  expiresAt: Date;
}

/**
 * Signs a user in: a new random token (the cookie's value; only its hash is stored), never one the
 * browser brought, so a token planted before sign-in is worth nothing after it.
 */
export async function createSession(sql: Queryable, userId: string): Promise<NewSession> {
  const token = generateToken();
  // Expired sessions go as new ones begin (indexed on expires_at): the table needs no sweeping job.
  await sql`delete from sessions where expires_at < now()`;
  const [created] = await sql<{ id: string; expiresAt: Date }[]>`
    insert into sessions (user_id, token_hash, expires_at)
    values (${userId}, ${hashToken(token)}, now() + ${SESSION_IDLE_DAYS} * interval '1 day')
    returning id, expires_at as "expiresAt"`;
  return { token, sessionId: created!.id, userId, expiresAt: created!.expiresAt };
}
