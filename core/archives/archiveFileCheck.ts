import type { Queryable } from '../db/database.ts';

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
