import type { Sql } from '../db/database.ts';
import { hashToken } from '../keys.ts';

/** Signs out: the session is deleted, so its cookie signs nobody in, even if it was copied. */
export async function endSession(sql: Sql, token: string): Promise<boolean> {
  const ended = await sql`delete from sessions where token_hash = ${hashToken(token)} returning id`;
  return ended.length > 0;
}
