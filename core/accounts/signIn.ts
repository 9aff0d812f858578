import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../db/database.ts';
import { normalizeEmail } from '../email/normalizeEmail.ts';
import { AppError } from '../errors.ts';
import { createSession, type NewSession } from './createSession.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { countSignInAttempt } from './signInAttempts.ts';

/** Waits `ms` without holding anything up but this request; tests pass one that records the wait instead. */
export type Pause = (ms: number) => Promise<unknown>;

/**
 * Signs in with an email (in any of its forms: normalizeEmail) and a password: a new session, or 401
 * UNAUTHORIZED saying only that the pair is wrong (whether the email exists is not told, and takes as
 * long to find out), or 429 after too many failures from this address. An email that many attempts
 * failed for waits first (`pause`), whatever the password. A password hashed with older parameters is
 * hashed again with today's.
 */
export async function signIn(
  sql: Sql,
  input: { email: string; password: string; address: string },
  pause: Pause = sleep,
): Promise<NewSession> {
  const email = normalizeEmail(input.email);
  const attempt = await countSignInAttempt(sql, { address: input.address, email });
  if (attempt.delayMs > 0) await pause(attempt.delayMs);
  const [user] = await sql<{ id: string; passwordHash: string | null }[]>`
    select id, password_hash as "passwordHash" from users where email = ${email}`;
  const { valid, outdated } = await verifyPassword(input.password, user?.passwordHash);
  if (!user || !valid) throw new AppError('UNAUTHORIZED', 'Wrong email or password; check both and try again');
  await attempt.refund();
  if (outdated) {
    const rehashed = await hashPassword(input.password);
    // Only if nobody changed the password meanwhile.
    await sql`update users set password_hash = ${rehashed} where id = ${user.id} and password_hash = ${user.passwordHash}`;
  }
  return createSession(sql, user.id);
}
