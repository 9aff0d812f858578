import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { TierName } from '../schemas.ts';

/** Moves a user to another tier; their sessions and key follow at their next request (a key above the tier's scope is capped at use). */
export async function setUserTier(sql: Sql, userId: string, tier: TierName): Promise<void> {
  const updated = await sql`update users set tier = ${tier} where id = ${userId} returning id`;
  if (updated.length === 0) throw new AppError('NOT_FOUND', 'no such user; it may have been deleted');
}
