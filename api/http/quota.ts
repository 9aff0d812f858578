import type { ServerResponse } from 'node:http';
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { LimitName, LimitRule } from '../../core/schemas.ts';
import { consumeQuotas, type QuotaDecision } from '../../core/usage/consumeQuota.ts';
import { describeReset } from '../../core/usage/quota.ts';
import type { Caller } from './auth.ts';

const per = (rule: LimitRule) =>
  rule.window === 'utc_day'
    ? 'per day (UTC)'
    : (({ 60: 'per minute', 3600: 'per hour', 86400: 'per day' } as Record<number, string>)[rule.windowSeconds] ??
      `per ${rule.windowSeconds} s`);

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
export const quotaSubject = (caller: Caller, rule: LimitRule) =>
  rule.countedPer === 'key' && caller.kind === 'key' ? caller.keyId : caller.subject;

/** Administrators are not limited by the tiers' quotas on their own instance: counted and shown, never refused. */
export const limitsEnforcedFor = (caller: Caller) => caller.kind === 'anonymous' || !caller.isAdmin;

/**
 * Counts units of several limits for the caller (per user, per key, or per address when anonymous) in
 * one statement, in order: each is counted only if every one before it was, and the first that cannot
 * take its units refuses the request (429 RATE_LIMITED, with its headers). The RateLimit headers of the
 * last limit counted go on the response, when there is one (an MCP call's answer is not an HTTP response
 * of its own). An administrator's units are counted against the tier's numbers but never refused. `at`
 * replaces the database clock (tests of a window's end). Used through the guard chain (api/http/guard.ts).
 */
export async function chargeQuotas(
  sql: Sql,
  caller: Caller,
  charges: ReadonlyArray<{ name: LimitName; units?: number }>,
  res: Pick<ServerResponse, 'setHeader'> | undefined,
  at?: Date,
): Promise<QuotaDecision[]> {
  const rules = charges.map(({ name }) => caller.tier.limits[name]);
  const enforced = limitsEnforcedFor(caller);
  const decisions = await consumeQuotas(
    sql,
    charges.map(({ units }, index) => ({ subject: quotaSubject(caller, rules[index]!), rule: rules[index]!, units, enforced })),
    at,
  );
  for (const [index, decision] of decisions.entries()) {
    if (!decision.allowed) throw refusal(caller, charges[index]!.name, decision, charges[index]!.units ?? 1, at);
    for (const [header, value] of Object.entries(rateLimitHeaders(decision))) res?.setHeader(header, value);
  }
  return decisions;
}

function refusal(caller: Caller, name: LimitName, decision: QuotaDecision, units: number, at?: Date): AppError {
  const rule = caller.tier.limits[name];
  const retryAfter = decision.retryAfterSeconds!;
  const needs = units > 1 ? `this request needs ${units} ${rule.unit} and ${decision.remaining ?? 0} remain; ` : '';
  const message =
    rule.max === 0
      ? `Limit reached: the ${caller.tier.displayName} tier allows no ${rule.unit} (${name})`
      : units > (rule.max ?? Number.MAX_SAFE_INTEGER)
        ? `Limit reached: this request needs ${units} ${rule.unit}, more than the ${rule.max} ${per(rule)} the ${caller.tier.displayName} tier allows (${name}); ask for fewer`
        : `Limit reached: ${needs}${rule.max} ${rule.unit} ${per(rule)} (${name}); resets at ${describeReset(retryAfter, at?.getTime())} (in ${retryAfter} s)`;
  return new AppError('RATE_LIMITED', message, {
    headers: { ...rateLimitHeaders(decision), 'Retry-After': String(retryAfter) },
    details: { limit: name, max: rule.max, retryAfterSeconds: retryAfter, ...(units > 1 ? { units, remaining: decision.remaining } : {}) },
  });
}
