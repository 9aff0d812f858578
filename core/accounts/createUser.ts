import { AppError } from '../errors.ts';
import type { Sql } from '../db/database.ts';
import type { TierName } from '../schemas.ts';

export interface User { id: string; email: string; tier: TierName; isAdmin: boolean; createdAt: Date }

export async function createUser(sql: Sql, input: { email: string; tier: TierName; isAdmin: boolean }): Promise<User> {
  try {
    const [user] = await sql<User[]>`
      insert into users (email, tier, is_admin) values (${input.email}, ${input.tier}, ${input.isAdmin})
      returning id, email, tier, is_admin as "isAdmin", created_at as "createdAt"`;
    return user!;
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new AppError('INVALID_INPUT', `a user with email ${input.email} already exists`);
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
  if (!user) throw new AppError('NOT_FOUND', `no user with email ${email}; create one with: afterimage users create --email ${email} --tier pro`);
  return user;
}
