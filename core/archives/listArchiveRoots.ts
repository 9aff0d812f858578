/**
 * The archive roots stored in the database (sql/032_archive_roots.sql): yt-dlp folders an import
 * loaded, read by crawls beside ARCHIVE_DIR. Paths are real paths (symbolic links resolved).
 */
import type { Queryable } from '../db/database.ts';

export interface ArchiveRoot {
  path: string;
  addedAt: Date;
  /** Set when removed: crawls no longer read it, its files are no longer served. */
  removedAt: Date | null;
}

/** Every root, in use first; removed ones too when asked. */
export function listArchiveRoots(sql: Queryable, options: { removed?: boolean } = {}): Promise<ArchiveRoot[]> {
  return sql<ArchiveRoot[]>`
    select path, added_at as "addedAt", removed_at as "removedAt" from archive_roots
    where ${options.removed ?? false} or removed_at is null
    order by removed_at is not null, path`;
}

/** The paths of the roots in use (what crawls read), in a stable order. */
export async function activeArchiveRoots(sql: Queryable): Promise<string[]> {
  return (await sql<{ path: string }[]>`select path from archive_roots where removed_at is null order by path`).map((row) => row.path);
}
