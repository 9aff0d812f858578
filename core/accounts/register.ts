import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { createUser } from './createUser.ts';
import { countSignInAttempt } from './signInAttempts.ts';

/**
 * Open sign-up (REGISTRATION=open): a user of the registered tier, who then signs in. An address that
 * already has an account is left as it is, and the caller is not told: sign-up answers the same either
 * way, so it cannot be used to learn who has an account (the password is hashed in both cases, so the
 * time taken says nothing either). Each sign-up counts as an attempt of its address, kept even when it
 * succeeds, so one address cannot make accounts by the hundred. The email and password must already
 * be valid (the `email` and `password` schemas).
 */
export async function register(sql: Sql, input: { email: string; password: string; address: string }): Promise<void> {
  await countSignInAttempt(sql, { address: input.address });
  try {
    await createUser(sql, { email: input.email, tier: 'registered', isAdmin: false, password: input.password });
  } catch (error) {
    // createUser's one refusal of valid input: the address is taken.
    if (!(error instanceof AppError && error.code === 'INVALID_INPUT')) throw error;
  }
}
