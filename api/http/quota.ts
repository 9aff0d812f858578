import type { ServerResponse } from 'node:http';
import type { Sql } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { LimitName, LimitRule } from '../../core/schemas.ts';
import { consumeQuotas, type QuotaDecision } from '../../core/usage/consumeQuota.ts';
import { describeReset } from '../../core/usage/quota.ts';
import type { Charge } from '../../core/generations/generationKind.ts';
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

/**
 * Counts one unit (or `units`, all or none) of a limit for the caller (per user, per key, or per address
 * when anonymous), puts the RateLimit headers on the response, and refuses with 429 RATE_LIMITED when
 * the limit cannot take them. `at` replaces the database clock (tests of a window's end). Without `res`
 * (MCP tool calls, whose answer is not an HTTP response of its own) no headers are set.
 */
export async function chargeQuota(
  sql: Sql,
  caller: Caller,
  name: LimitName,
  res: Pick<ServerResponse, 'setHeader'> | undefined,
  units = 1,
  at?: Date,
): Promise<QuotaDecision> {
  return (await chargeQuotas(sql, caller, [{ name, units }], res, at)).at(-1)!;
}

/** chargeQuota for a generation: answers whose counter took the unit and in which bucket, so a failed generation can give it back. */
export async function chargeForGeneration(
  sql: Sql,
  caller: Caller,
  name: LimitName,
  res: Pick<ServerResponse, 'setHeader'> | undefined,
  at?: Date,
): Promise<Charge | undefined> {
  const decision = await chargeQuota(sql, caller, name, res, 1, at);
  return decision.windowStart && { subject: quotaSubject(caller, caller.tier.limits[name]), windowStart: decision.windowStart };
}

/**
 * chargeQuota for several limits in one statement, in order: each is counted only if every one before it
 * was, and the first that cannot take its units refuses the request (429, with its headers). The headers
 * of the last limit counted are the response's, as when charged one after the other.
 */
async function chargeQuotas(
  sql: Sql,
  caller: Caller,
  charges: ReadonlyArray<{ name: LimitName; units?: number }>,
  res: Pick<ServerResponse, 'setHeader'> | undefined,
  at?: Date,
): Promise<QuotaDecision[]> {
  const rules = charges.map(({ name }) => caller.tier.limits[name]);
  const decisions = await consumeQuotas(
    sql,
    charges.map(({ units }, index) => ({ subject: quotaSubject(caller, rules[index]!), rule: rules[index]!, units })),
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

/**
 * The quota of one request. The request is counted against its per-minute limit (requestsPerMinute, or
 * pageRequestsPerMinute for public pages) before the handler runs, or, for a route whose handler charges a
 * limit of its own before any work ('with-charge'), in the same statement as that charge; a request whose
 * handler ends without charging is counted then, and its refusal (429) replaces the handler's answer, so
 * every answer is the one counting first would have given. A cacheable read ('late') is counted once its
 * answer is known not to be a 304 Not Modified, which counts nothing (waive).
 */
export function requestQuota(
  sql: Sql,
  caller: Caller,
  res: Pick<ServerResponse, 'setHeader'>,
  rateLimited: boolean | 'with-charge',
  options: { late: boolean; limit: LimitName },
) {
  let pending = rateLimited === 'with-charge' || (rateLimited === true && options.late);
  const countRequest = async () => void (await chargeQuotas(sql, caller, [{ name: options.limit }], res));
  const settle = async () => {
    if (!pending) return;
    pending = false;
    await countRequest();
  };
  return {
    /** Before the handler: counts the request unless it waits for the handler's charge or its answer. */
    start: () => (rateLimited === true && !options.late ? countRequest() : Promise.resolve()),
    /** Counts `units` of a limit of the caller's (with the waiting request, if any); 429 when refused. */
    async charge(name: LimitName, units = 1, at?: Date): Promise<QuotaDecision> {
      const charges = pending ? [{ name: options.limit }, { name, units }] : [{ name, units }];
      pending = false;
      return (await chargeQuotas(sql, caller, charges, res, at)).at(-1)!;
    },
    /** Counts the request if nothing did yet: before an answer is written, and after a handler that threw. */
    settle,
    /** A 304: the waiting request is never counted. */
    waive() {
      pending = false;
    },
  };
}
