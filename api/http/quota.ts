import type { ServerResponse } from 'node:http';
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { LimitName, LimitRule } from '../../core/schemas.ts';
import { consumeQuota, type QuotaDecision } from '../../core/usage/consumeQuota.ts';
import { describeReset } from '../../core/usage/quota.ts';
import type { Caller } from './auth.ts';

const per = (rule: LimitRule) =>
  rule.window === 'utc_day' ? 'per day (UTC)' : ({ 60: 'per minute', 3600: 'per hour', 86400: 'per day' } as Record<number, string>)[rule.windowSeconds] ?? `per ${rule.windowSeconds} s`;

/** RateLimit header fields (IETF httpapi draft) describing the quota that governed this request. */
function rateLimitHeaders(decision: QuotaDecision): Record<string, string> {
  if (decision.max === null) return {};
  return {
    'RateLimit-Limit': String(decision.max),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.allowed ? decision.resetSeconds : decision.retryAfterSeconds),
    'RateLimit-Policy': `${decision.max};w=${decision.windowSeconds}`,
  };
}

/** Whose counter a limit uses: the key's for per-key limits, else the user's (or the address's). */
export const quotaSubject = (caller: Caller, rule: LimitRule) => (rule.countedPer === 'key' && caller.kind === 'key' ? caller.keyId : caller.subject);

/**
 * Counts one unit (or `units`, all or none) of a limit for the caller (per user, per key, or per address
 * when anonymous), puts the RateLimit headers on the response, and refuses with 429 RATE_LIMITED when
 * the limit cannot take them. `at` replaces the database clock (tests of a window's end). Without `res`
 * (MCP tool calls, whose answer is not an HTTP response of its own) no headers are set.
 */
export async function chargeQuota(sql: Sql, caller: Caller, name: LimitName, res: Pick<ServerResponse, 'setHeader'> | undefined, units = 1, at?: Date): Promise<QuotaDecision> {
  const rule = caller.tier.limits[name];
  const decision = await consumeQuota(sql, quotaSubject(caller, rule), rule, units, at);
  const headers = rateLimitHeaders(decision);
  if (decision.allowed) {
    for (const [header, value] of Object.entries(headers)) res?.setHeader(header, value);
    return decision;
  }
  const retryAfter = decision.retryAfterSeconds!;
  const needs = units > 1 ? `this request needs ${units} ${rule.unit} and ${decision.remaining ?? 0} remain; ` : '';
  const message = rule.max === 0
    ? `Limit reached: the ${caller.tier.displayName} tier allows no ${rule.unit} (${name})`
    : units > (rule.max ?? Number.MAX_SAFE_INTEGER)
      ? `Limit reached: this request needs ${units} ${rule.unit}, more than the ${rule.max} ${per(rule)} the ${caller.tier.displayName} tier allows (${name}); ask for fewer`
      : `Limit reached: ${needs}${rule.max} ${rule.unit} ${per(rule)} (${name}); resets at ${describeReset(retryAfter, at?.getTime())} (in ${retryAfter} s)`;
  throw new AppError('RATE_LIMITED', message, {
    headers: { ...headers, 'Retry-After': String(retryAfter) },
    details: { limit: name, max: rule.max, retryAfterSeconds: retryAfter, ...(units > 1 ? { units, remaining: decision.remaining } : {}) },
  });
}
