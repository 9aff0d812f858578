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

/** Stores a root, or puts a removed one back in use; true when it was not in use before. */
export async function addArchiveRoot(sql: Queryable, path: string): Promise<boolean> {
  const rows = await sql`
    insert into archive_roots (path) values (${path})
    on conflict (path) do update set removed_at = null, added_at = now() where archive_roots.removed_at is not null
    returning 1`;
  return rows.length > 0;
}

/** Stops using a root (its row, files and what was stored from it stay); false when no root in use has that path. */
export async function removeArchiveRoot(sql: Queryable, path: string): Promise<boolean> {
  const rows = await sql`update archive_roots set removed_at = now() where path = ${path} and removed_at is null returning 1`;
  return rows.length > 0;
}

/**
 * Which recorded archive files (an info.json, a subtitle or media file) may still be read: not one
 * under a removed root, unless a root in use holds it too. Files under no stored root (ARCHIVE_DIR,
 * or folders imported before roots were stored) are read as ever. One query, then a check per path.
 */
export async function archiveFileCheck(sql: Queryable): Promise<(path: string) => boolean> {
  const roots = await sql<{ path: string; removed: boolean }[]>`select path, removed_at is not null as removed from archive_roots`;
  const holds = (root: string, path: string) => path.startsWith(root.endsWith('/') ? root : `${root}/`);
  return (path) =>
    !roots.some((root) => root.removed && holds(root.path, path)) || roots.some((root) => !root.removed && holds(root.path, path));
}
