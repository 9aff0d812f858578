import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { consumeQuotas, refundQuotas } from '../usage/consumeQuota.ts';
import { hashedSubject } from '../usage/hashedSubject.ts';
import { describeReset, type CountedLimit } from '../usage/consumeQuota.ts';

/**
 * Sign-in attempts are counted like a tier's limits (usage_counters, sliding windows, atomic across
 * processes), per client address and per email typed: one address cannot try many accounts, and many
 * addresses cannot try one account quickly. A successful sign-in is given back, so only failures add up.
 * The per-account limit is higher than the per-address one, so that locking a person out takes
 * someone failing from several addresses.
 */
export const signInLimits = {
  perAddress: {
    name: 'signInsPerAddress',
    description: 'Failed sign-in attempts and sign-ups per client address per 15 minutes',
    unit: 'sign-in attempts',
    window: 'sliding',
    windowSeconds: 900,
    countedPer: 'user',
    max: 10,
  },
  perAccount: {
    name: 'signInsPerAccount',
    description: 'Failed sign-in attempts per email address per hour',
    unit: 'sign-in attempts',
    window: 'sliding',
    windowSeconds: 3600,
    countedPer: 'user',
    max: 20,
  },
} as const satisfies Record<string, CountedLimit>;

export interface CountedAttempt {
  refund(): Promise<void>;
}

/**
 * Counts one attempt from `address` (and for `email`, when there is one: sign-ups count per address only);
 * 429 RATE_LIMITED, with when to come back, when either limit is full. Counted before the password is
 * checked, so concurrent guesses cannot slip past the limit.
 */
export async function countSignInAttempt(sql: Sql, attempt: { address: string; email?: string }): Promise<CountedAttempt> {
  const charges = [
    { subject: hashedSubject(`sign-in-address:${attempt.address}`), rule: signInLimits.perAddress },
    ...(attempt.email === undefined
      ? []
      : [{ subject: hashedSubject(`sign-in-email:${attempt.email.toLowerCase()}`), rule: signInLimits.perAccount }]),
  ];
  const decisions = await consumeQuotas(sql, charges);
  const refund = () =>
    refundQuotas(
      sql,
      decisions.flatMap((decision, index) =>
        decision.allowed
          ? [{ subject: charges[index]!.subject, limit: charges[index]!.rule.name, windowStart: decision.windowStart! }]
          : [],
      ),
    );
  const refused = decisions.find((decision) => !decision.allowed);
  if (refused) {
    // A refused attempt checked no password: it counts nowhere (the address's count is given back when the account's refuses).
    await refund();
    const retryAfter = refused.retryAfterSeconds!;
    const who = refused.name === signInLimits.perAddress.name ? 'from this address' : 'for this account';
    const minutes = Math.ceil(retryAfter / 60);
    throw new AppError(
      'RATE_LIMITED',
      `Too many sign-in attempts ${who}: try again after ${describeReset(retryAfter)} (in ${minutes} minute${minutes === 1 ? '' : 's'})`,
      {
        headers: { 'Retry-After': String(retryAfter) },
        details: { limit: refused.name, max: refused.max, retryAfterSeconds: retryAfter },
      },
    );
  }
  return { refund };
}
