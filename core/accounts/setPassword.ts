import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { hashPassword } from './password.ts';

/**
 * Sets a user's password and ends every session of theirs but `keepSessionId` (the one that changed it,
 * on the website): whoever knew the old password is signed out everywhere. Returns how many ended.
 * The password must already be valid (the `password` schema).
 */
export async function setPassword(
  sql: Sql,
  userId: string,
  secret: string,
  options: { keepSessionId?: string } = {},
): Promise<{ endedSessions: number }> {
  const hash = await hashPassword(secret);
  return sql.begin(async (tx) => {
    const updated = await tx`update users set password_hash = ${hash} where id = ${userId} returning id`;
    if (updated.length === 0) throw new AppError('NOT_FOUND', 'no such user');
    const ended =
      await tx`delete from sessions where user_id = ${userId} and id is distinct from ${options.keepSessionId ?? null}::uuid returning id`;
    return { endedSessions: ended.length };
  });
}
