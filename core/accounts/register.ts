import type { Sql } from '../db/database.ts';
import { createSession, type NewSession } from './createSession.ts';
import { createUser } from './createUser.ts';
import { countSignUp } from './signInAttempts.ts';

/**
 * Open sign-up (REGISTRATION=open): a user of the registered tier, signed in at once. Each sign-up counts
 * against its address's sign-up budget (signUpLimit), not its sign-in one. The email and password must
 * already be valid (the `email` and `password` schemas); createUser refuses look-alikes.
 */
export async function register(sql: Sql, input: { email: string; password: string; address: string }): Promise<NewSession> {
  await countSignUp(sql, input.address);
  const user = await createUser(sql, { email: input.email, tier: 'registered', isAdmin: false, password: input.password });
  return createSession(sql, user.id);
}
