import type { Sql } from '../db/database.ts';
import { hashToken, isWellFormedToken } from '../keys.ts';
import type { TierName } from '../schemas.ts';
import { SESSION_IDLE_DAYS, SESSION_MAX_DAYS } from './createSession.ts';

export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
  isAdmin: boolean;
  tier: TierName;
}

/**
 * The user signed in by a session token, if the session exists and has not expired. Use extends the
 * session (another week, up to a month after it began), written at most once a minute per session.
 */
export async function sessionUser(sql: Sql, token: string): Promise<SessionUser | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const [found] = await sql<SessionUser[]>`
    with found as (
      select s.id, s.user_id, s.last_seen_at from sessions s where s.token_hash = ${hashToken(token)} and s.expires_at > now()
    ), touched as (
      update sessions s set last_seen_at = now(),
        expires_at = least(s.created_at + ${SESSION_MAX_DAYS} * interval '1 day', now() + ${SESSION_IDLE_DAYS} * interval '1 day')
      from found where s.id = found.id and found.last_seen_at < now() - interval '1 minute'
    )
    select f.id as "sessionId", u.id as "userId", u.email, u.is_admin as "isAdmin", u.tier
    from found f join users u on u.id = f.user_id`;
  return found;
}
