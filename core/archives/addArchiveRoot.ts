import type { Queryable } from '../db/database.ts';

/** Stores a root, or puts a removed one back in use; true when it was not in use before. */
export async function addArchiveRoot(sql: Queryable, path: string): Promise<boolean> {
  const rows = await sql`
    insert into archive_roots (path) values (${path})
    on conflict (path) do update set removed_at = null, added_at = now() where archive_roots.removed_at is not null
    returning 1`;
  return rows.length > 0;
}
