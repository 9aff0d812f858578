import type { IncomingMessage } from 'node:http';
import { SESSION_MAX_DAYS } from '../../core/accounts/createSession.ts';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import { anonymousCaller, type Caller } from './auth.ts';
import { readCookie, setCookie } from './cookies.ts';

const SESSION = 'afterimage_session';

export interface VisitorDeps { sql: Sql; tiers: TierCache; config: Pick<Config, 'PUBLIC_URL' | 'TRUST_PROXY'> }

/** The session token the browser sent, if any (valid or not). */
export const sessionToken = (req: IncomingMessage, config: Pick<Config, 'PUBLIC_URL'>) => readCookie(req, config, SESSION);

/** Set-Cookie for a new session (lasting as long as a session may); without a token, the cookie's removal. */
export const sessionCookie = (config: Pick<Config, 'PUBLIC_URL'>, token?: string) =>
  setCookie(config, SESSION, token ?? '', token ? SESSION_MAX_DAYS * 86_400 : 0);

/**
 * Who is visiting a page: the person signed in by the session cookie, as a `session` caller (their tier,
 * limits and private items, as with their key), or else an anonymous visitor counted per client address
 * (X-Forwarded-For when TRUST_PROXY). A stale or unknown cookie is an anonymous visit, not an error.
 */
export async function identifyVisitor(deps: VisitorDeps, req: IncomingMessage): Promise<Caller> {
  const token = sessionToken(req, deps.config);
  const [user, tiers] = await Promise.all([token ? sessionUser(deps.sql, token) : undefined, deps.tiers.get()]);
  if (!user) return anonymousCaller({ trustProxy: deps.config.TRUST_PROXY }, req, tiers);
  return { kind: 'session', tier: tiers.get(user.tier)!, subject: user.userId, userId: user.userId, email: user.email, isAdmin: user.isAdmin, sessionId: user.sessionId };
}
