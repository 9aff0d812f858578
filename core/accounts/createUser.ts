import { AppError } from '../errors.ts';
import type { Queryable, Sql } from '../db/database.ts';
import type { TierName } from '../schemas.ts';
import { hashPassword } from './password.ts';

export interface User {
  id: string;
  email: string;
  tier: TierName;
  isAdmin: boolean;
  createdAt: Date;
}

/** A user; without a password they use API keys only (a password can be set later). The password must already be valid (the `password` schema). */
export async function createUser(
  sql: Queryable,
  input: { email: string; tier: TierName; isAdmin: boolean; password?: string },
): Promise<User> {
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  try {
    const [user] = await sql<User[]>`
      insert into users (email, tier, is_admin, password_hash) values (${input.email}, ${input.tier}, ${input.isAdmin}, ${passwordHash})
      returning id, email, tier, is_admin as "isAdmin", created_at as "createdAt"`;
    return user!;
  } catch (error) {
    if ((error as { code?: string }).code === '23505')
      throw new AppError('INVALID_INPUT', `a user with email ${input.email} already exists`);
    throw error;
  }
}

async function findUserByEmail(sql: Sql, email: string): Promise<User | undefined> {
  const [user] = await sql<User[]>`
    select id, email, tier, is_admin as "isAdmin", created_at as "createdAt" from users where lower(email) = lower(${email})`;
  return user;
}

export async function requireUserByEmail(sql: Sql, email: string): Promise<User> {
  const user = await findUserByEmail(sql, email);
  if (!user)
    throw new AppError('NOT_FOUND', `no user with email ${email}; create one with: afterimage users create --email ${email} --tier pro`);
  return user;
}
