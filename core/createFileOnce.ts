import { randomUUID } from 'node:crypto';
import { link, rm, writeFile } from 'node:fs/promises';

/**
 * Creates `path` holding `content` whole, unless it exists (then false): written beside it, then linked into
 * place, which fails when the path exists. Opened exclusively and written after, the file was there empty for
 * a moment, and a process racing this one read it so: two starters both took a start lock, and a worker started
 * beside its API on a fresh DATA_DIR read an empty secret.key and refused to start.
 */
export async function createFileOnce(path: string, content: string, mode: number): Promise<boolean> {
  const written = `${path}.${process.pid}.${randomUUID()}`;
  await writeFile(written, content, { mode });
  try {
    await link(written, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    await rm(written, { force: true });
  }
}
