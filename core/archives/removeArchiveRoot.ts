import type { Queryable } from '../db/database.ts';

/** Stops using a root (its row, files and what was stored from it stay); false when no root in use has that path. */
export async function removeArchiveRoot(sql: Queryable, path: string): Promise<boolean> {
  const rows = await sql`update archive_roots set removed_at = now() where path = ${path} and removed_at is null returning 1`;
  return rows.length > 0;
}
