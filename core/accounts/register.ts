import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { createUser } from './createUser.ts';
import { countSignUp } from './signInAttempts.ts';

/**
 * Open sign-up (REGISTRATION=open): a user of the registered tier, who then signs in. An address that
 * already has an account is left as it is, and the caller is not told: sign-up answers the same either
 * way, so it cannot be used to learn who has an account (the password is hashed in both cases, so the
 * time taken says nothing either). Each sign-up counts against its client address's sign-up budget
 * (signUpLimit), not its sign-in one. The email and password must already be valid (the `email` and
 * `password` schemas); createUser refuses mixed scripts and look-alikes of existing accounts, and the
 * caller is told, since they must choose another address.
 */
export async function register(sql: Sql, input: { email: string; password: string; address: string }): Promise<void> {
  await countSignUp(sql, input.address);
  try {
    await createUser(sql, { email: input.email, tier: 'registered', isAdmin: false, password: input.password });
  } catch (error) {
    if (!(error instanceof AppError && (error.options.details as { reason?: string } | undefined)?.reason === 'email_taken')) throw error;
  }
}
