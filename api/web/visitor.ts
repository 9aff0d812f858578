import type { IncomingMessage } from 'node:http';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import { anonymousCaller, type Caller } from '../http/guard.ts';
import type { ApiDeps } from '../http/route.ts';
import { sessionToken } from '../http/session.ts';
import type { Account } from './layout.tsx';

/**
 * Who is looking at a page, as a `Caller`, so tiers, quotas and privacy apply to pages exactly as to
 * the API: the person signed in by the session cookie (their tier, limits and private items); else an
 * anonymous visitor with the anonymous tier, counted per client address (X-Forwarded-For when
 * TRUST_PROXY). A stale cookie is an anonymous visit. An API key is no credential here: a key's scope
 * limits what a program may do through the API, and pages (which have none) would let it do more.
 */
export async function identifyVisitor(deps: Pick<ApiDeps, 'sql' | 'tiers' | 'config'>, req: IncomingMessage): Promise<Caller> {
  const token = sessionToken(req, deps.config);
  const user = token ? await sessionUser(deps.sql, token) : undefined;
  const tiers = await deps.tiers.get();
  if (!user) return anonymousCaller(deps, req, tiers);
  const tier = tiers.get(user.tier)!;
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
