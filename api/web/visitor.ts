import type { IncomingMessage } from 'node:http';
import { authenticate, type Caller } from '../http/auth.ts';
import type { ApiDeps } from '../http/route.ts';
import type { Account } from './layout.tsx';

/**
 * Who is looking at a page, as a `Caller`, so tiers, quotas and privacy apply to pages exactly as to
 * the API: anonymous visitors get the anonymous tier, counted per client address (TRUST_PROXY).
 */
export function identifyVisitor(deps: ApiDeps, req: IncomingMessage): Promise<Caller> {
  return authenticate({ sql: deps.sql, tiers: deps.tiers, log: deps.log, trustProxy: deps.config.TRUST_PROXY }, req, 'public', false);
}

/** The header's view of a visitor. */
export const accountOf = (visitor: Caller): Account | undefined => (visitor.kind === 'anonymous' ? undefined : { email: visitor.email, isAdmin: visitor.isAdmin });
