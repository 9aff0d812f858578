import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { consumeQuotas, describeReset, refundQuotas, type CountedLimit, type QuotaDecision } from '../usage/consumeQuota.ts';
import { hashedSubject } from '../usage/hashedSubject.ts';

/**
 * Sign-in attempts are counted like a tier's limits (usage_counters, sliding windows, atomic across
 * processes), in three ways. Per client address and per (address, email) pair they are refused when
 * full: one address cannot try many accounts, nor one account many times. Per email they are never
 * refused, only slowed down (accountSlowdown): failures from elsewhere, however many, never lock the
 * owner out, and the right password from an address within its limits always signs in. A successful
 * sign-in is given back, so only failures add up. Sign-ups have a budget of their own.
 */
export const signInLimits = {
  perAddress: {
    name: 'signInsPerAddress',
    description: 'Failed sign-in attempts per client address per 15 minutes',
    unit: 'sign-in attempts',
    window: 'sliding',
    windowSeconds: 900,
    countedPer: 'user',
    max: 10,
  },
  perAddressAndEmail: {
    name: 'signInsPerAddressAndEmail',
    description: 'Failed sign-in attempts per client address and email address per 15 minutes',
    unit: 'sign-in attempts',
    window: 'sliding',
    windowSeconds: 900,
    countedPer: 'user',
    max: 5,
  },
  perAccount: {
    name: 'signInsPerAccount',
    description: 'Failed sign-in attempts per email address per hour; past a few, each attempt waits longer (never refused)',
    unit: 'sign-in attempts',
    window: 'sliding',
    windowSeconds: 3600,
    countedPer: 'user',
    max: null,
  },
} as const satisfies Record<string, CountedLimit>;

export const signUpLimit = {
  name: 'signUpsPerAddress',
  description: 'Sign-ups per client address per hour',
  unit: 'sign-ups',
  window: 'sliding',
  windowSeconds: 3600,
  countedPer: 'user',
  max: 10,
} as const satisfies CountedLimit;

/**
 * How an email's failures slow its sign-ins down: past `freeFailures` in the hour, each attempt waits
 * `firstMs`, doubling with every further failure up to `maxMs`. A guesser spread over many addresses
 * gets an answer every few seconds at best; the owner, typing the right password, waits as long once.
 */
export const accountSlowdown = { freeFailures: 5, firstMs: 500, maxMs: 4_000 };

export function slowdownMs(failures: number): number {
  const beyond = failures - accountSlowdown.freeFailures;
  return beyond <= 0 ? 0 : Math.min(accountSlowdown.maxMs, accountSlowdown.firstMs * 2 ** (beyond - 1));
}

export interface CountedAttempt {
  /** How long to wait before checking the password (slowdownMs of the email's failures, this one included). */
  delayMs: number;
  refund(): Promise<void>;
}

const refundOf = (sql: Sql, charges: ReadonlyArray<{ subject: string; rule: CountedLimit }>, decisions: QuotaDecision[]) => () =>
  refundQuotas(
    sql,
    decisions.flatMap((decision, index) =>
      decision.allowed ? [{ subject: charges[index]!.subject, limit: charges[index]!.rule.name, windowStart: decision.windowStart! }] : [],
    ),
  );

function tooMany(refused: QuotaDecision, what: string): AppError {
  const retryAfter = refused.retryAfterSeconds!;
  const minutes = Math.ceil(retryAfter / 60);
  return new AppError(
    'RATE_LIMITED',
    `${what}: try again after ${describeReset(retryAfter)} (in ${minutes} minute${minutes === 1 ? '' : 's'})`,
    {
      headers: { 'Retry-After': String(retryAfter) },
      details: { limit: refused.name, max: refused.max, retryAfterSeconds: retryAfter },
    },
  );
}

/**
 * Counts one attempt from `address` at the (normalised) `email`: 429 RATE_LIMITED, with when to come
 * back, when the address's or the pair's limit is full; else how long to wait. Counted before the
 * password is checked, so concurrent guesses cannot slip past the limits.
 */
export async function countSignInAttempt(sql: Sql, attempt: { address: string; email: string }): Promise<CountedAttempt> {
  const charges = [
    { subject: hashedSubject(`sign-in-address:${attempt.address}`), rule: signInLimits.perAddress },
    { subject: hashedSubject(`sign-in-pair:${attempt.address} ${attempt.email}`), rule: signInLimits.perAddressAndEmail },
    { subject: hashedSubject(`sign-in-email:${attempt.email}`), rule: signInLimits.perAccount },
  ];
  const decisions = await consumeQuotas(sql, charges);
  const refund = refundOf(sql, charges, decisions);
  const refused = decisions.find((decision) => !decision.allowed);
  if (refused) {
    // A refused attempt checked no password: it counts nowhere (the address's count is given back when the pair's refuses).
    await refund();
    const who = refused.name === signInLimits.perAddress.name ? 'from this address' : 'for this account from this address';
    throw tooMany(refused, `Too many sign-in attempts ${who}`);
  }
  return { delayMs: slowdownMs(decisions[2]!.used), refund };
}

/** Counts one sign-up from `address`, kept even when it succeeds, so one address cannot make accounts by the hundred; 429 when full. */
export async function countSignUp(sql: Sql, address: string): Promise<void> {
  const [decision] = await consumeQuotas(sql, [{ subject: hashedSubject(`sign-up-address:${address}`), rule: signUpLimit }]);
  if (!decision!.allowed) throw tooMany(decision!, 'Too many sign-ups from this address');
}
