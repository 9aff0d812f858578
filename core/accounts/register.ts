import type { Sql } from '../db/database.ts';
import { createSession, type NewSession } from './createSession.ts';
import { createUser } from './createUser.ts';
import { countSignInAttempt } from './signInAttempts.ts';

/**
 * Open sign-up (REGISTRATION=open): a user of the registered tier, signed in at once. Each sign-up counts
 * as an attempt of its address, kept even when it succeeds, so one address cannot make accounts by the
 * hundred. The email and password must already be valid (the `email` and `password` schemas).
 */
export async function register(sql: Sql, input: { email: string; password: string; address: string }): Promise<NewSession> {
  await countSignInAttempt(sql, { address: input.address });
  const user = await createUser(sql, { email: input.email, tier: 'registered', isAdmin: false, password: input.password });
  return createSession(sql, user.id);
}
