import { AppError } from '../errors.ts';
import type { Sql } from '../db/database.ts';
import { emailSkeleton, mixedScripts } from '../email/lookAlikes.ts';
import { normalizeEmail } from '../email/normalizeEmail.ts';
import type { TierName } from '../schemas.ts';
import { hashPassword } from './password.ts';

export interface User {
  id: string;
  email: string;
  tier: TierName;
  isAdmin: boolean;
  createdAt: Date;
}

/**
 * A user; without a password they use API keys only (a password can be set later). The password must
 * already be valid (the `password` schema). The email is stored normalised (normalizeEmail); one that
 * mixes scripts in a part, or looks like an existing account's (the same TR39 skeleton), is refused.
 */
export async function createUser(sql: Sql, input: { email: string; tier: TierName; isAdmin: boolean; password?: string }): Promise<User> {
  const email = normalizeEmail(input.email);
  const mixed = await mixedScripts(email);
  if (mixed)
    throw new AppError(
      'INVALID_INPUT',
      `the email ${email} mixes ${mixed.scripts.join(' and ')} letters in "${mixed.part}", as look-alikes of other addresses do; write each part in one script`,
    );
  const skeleton = await emailSkeleton(email);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  try {
    return await sql.begin(async (tx) => {
      // Look-alikes created at the same moment take turns, so the second one sees the first.
      await tx`select pg_advisory_xact_lock(hashtextextended(${skeleton}, 0))`;
      const [lookAlike] = await tx`select 1 from users where email_skeleton = ${skeleton} and email <> ${email}`;
      if (lookAlike) throw new AppError('INVALID_INPUT', `a user with an email that looks like ${email} already exists`);
      const [user] = await tx<User[]>`
        insert into users (email, email_skeleton, tier, is_admin, password_hash) values (${email}, ${skeleton}, ${input.tier}, ${input.isAdmin}, ${passwordHash})
        returning id, email, tier, is_admin as "isAdmin", created_at as "createdAt"`;
      return user!;
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505')
      throw new AppError('INVALID_INPUT', `a user with email ${email} already exists`, { details: { reason: 'email_taken' } });
    throw error;
  }
}

async function findUserByEmail(sql: Sql, email: string): Promise<User | undefined> {
  const [user] = await sql<User[]>`
    select id, email, tier, is_admin as "isAdmin", created_at as "createdAt" from users where email = ${normalizeEmail(email)}`;
  return user;
}

export async function requireUserByEmail(sql: Sql, email: string): Promise<User> {
  const user = await findUserByEmail(sql, email);
  if (!user)
    throw new AppError(
      'NOT_FOUND',
      `no user with email ${email}; create one with: npx afterimage users create --email ${email} --tier pro`,
    );
  return user;
}
