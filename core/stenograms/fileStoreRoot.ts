/**
 * How the file store knows its root is its own: a marker file written when the store is created. A
 * store whose volume is not mounted shows an empty mount point instead; writing there would report a
 * stenogram stored that nobody can read once the volume is back. Checked before every write.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { documentIds } from './documentIds.ts';

export const storeMarkerName = '.afterimage-store';
const documentName = /^[A-Za-z0-9_-]{11}\.md$/;
/** What a freshly made ext2/3/4 file system holds: not a sign of anyone's data. */
const fileSystemEntries = new Set(['lost+found']);

/** A write refused because the root is not this store's (unmounted, or someone else's folder). */
export class StoreRootRefused extends Error {
  override name = 'StoreRootRefused';
}

export interface StoreRootOptions {
  /** Whether stenograms were stored before (rows say so): an empty root is then a store gone missing, not a new one. */
  storedBefore?: () => Promise<boolean>;
}

const missing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException)?.code ?? '');

/** Whether a folder named like a user's holds at least one document (a store an older version made, before markers). */
async function holdsDocuments(folder: string): Promise<boolean> {
  const names = await readdir(folder).catch(() => []);
  return names.some((name) => documentName.test(name));
}

/**
 * Answers `ensure()`, which resolves when `root` is this store's and throws StoreRootRefused when it
 * is not. A root is this store's when it holds the marker. Without one: a missing or empty root is a
 * new store (unless `storedBefore` says stenograms were stored, or this process saw the marker
 * before), and a root holding nothing but user folders with documents is a store made before markers
 * existed; both get the marker. Anything else is refused, and nothing is written.
 */
export function storeRoot(root: string, options: StoreRootOptions = {}) {
  const marker = join(root, storeMarkerName);
  let seen = false;
  let claiming: Promise<void> | undefined;
  const refuse = (why: string) =>
    new StoreRootRefused(
      `the stenogram store ${root} ${why}; nothing was written. Check that its volume is mounted (DATA_DIR/stenograms, STENOGRAM_STORE); ` +
        `to start an empty store there on purpose, create the file ${marker}`,
    );

  async function claim(): Promise<void> {
    if (seen) throw refuse(`has lost its ${storeMarkerName} marker since this process last wrote to it`);
    const entries = await readdir(root, { withFileTypes: true }).catch((error: unknown) => {
      if (missing(error)) return [];
      throw error;
    });
    const found = entries.filter((entry) => !fileSystemEntries.has(entry.name));
    if (found.length === 0) {
      if (await options.storedBefore?.()) throw refuse(`is empty, with no ${storeMarkerName} marker, but stenograms were stored before`);
    } else {
      const userFolders = found.filter(
        (entry) => entry.isDirectory() && documentIds.shape.userId.safeParse(entry.name).data === entry.name,
      );
      const ours =
        userFolders.length === found.length &&
        (await Promise.all(userFolders.map((entry) => holdsDocuments(join(root, entry.name))))).some(Boolean);
      if (!ours) throw refuse(`holds files that are not stenograms and no ${storeMarkerName} marker`);
    }
    await mkdir(root, { recursive: true, mode: 0o700 });
    const handle = await open(marker, 'wx', 0o600).catch((error: unknown) => {
      // Another process claimed it meanwhile.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    });
    if (!handle) return;
    try {
      await handle.writeFile(
        `${JSON.stringify({ store: 'afterimage-stenograms', id: randomUUID(), createdAt: new Date().toISOString() })}\n`,
      );
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  return {
    marker,
    async ensure(): Promise<void> {
      const found = await stat(marker).then(
        () => true,
        (error: unknown) => {
          if (missing(error)) return false;
          throw error;
        },
      );
      if (!found) {
        // Concurrent writes claim once.
        claiming ??= claim().finally(() => {
          claiming = undefined;
        });
        await claiming;
      }
      seen = true;
    },
  };
}
