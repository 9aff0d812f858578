import type { IncomingMessage } from 'node:http';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import { authenticate, type Caller } from '../http/auth.ts';
import type { ApiDeps } from '../http/route.ts';
import { sessionToken } from '../http/session.ts';
import type { Account } from './layout.tsx';

/**
 * Who is looking at a page, as a `Caller`, so tiers, quotas and privacy apply to pages exactly as to
 * the API: the person signed in by the session cookie (their tier, limits and private items); else a
 * key sent as to the API (a script reading pages); else an anonymous visitor with the anonymous tier,
 * counted per client address (X-Forwarded-For when TRUST_PROXY). A stale cookie is an anonymous visit.
 */
export async function identifyVisitor(
  deps: Pick<ApiDeps, 'sql' | 'tiers' | 'apiKeys' | 'log' | 'config'>,
  req: IncomingMessage,
): Promise<Caller> {
  const token = sessionToken(req, deps.config);
  const user = token ? await sessionUser(deps.sql, token) : undefined;
  if (!user) return authenticate(deps, req, 'public', false);
  const tier = (await deps.tiers.get()).get(user.tier)!;
  return {
    kind: 'session',
    tier,
    subject: user.userId,
    userId: user.userId,
    email: user.email,
    isAdmin: user.isAdmin,
    sessionId: user.sessionId,
  };
}

/** The header's view of a visitor. */
export const accountOf = (visitor: Caller): Account | undefined =>
  visitor.kind === 'anonymous' ? undefined : { email: visitor.email, isAdmin: visitor.isAdmin };
