/**
 * Stenograms' Markdown on the local disk: `<root>/<userId>/<videoId>.md`, owner-only (0700 folders,
 * 0600 files: the documents are private), beside the marker that says the root is the store's
 * (below). Implements StenogramStore (store.ts, which imports this file).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { documentIds } from './documentIds.ts';

// Postgres prints uuids in lower case: one folder per user whatever case the caller used.
const documentName = /^([A-Za-z0-9_-]{11})\.md$/;
const temporaryName = /^\..+\.tmp$/;
/** A temporary file this old is a write that a crash interrupted, not one in progress. */
const staleTemporaryMs = 60 * 60 * 1000;

/** A catch handler that answers undefined for the given errno codes and rethrows anything else. */
const ignoring =
  (...codes: string[]) =>
  (error: unknown): undefined => {
    if (codes.includes((error as NodeJS.ErrnoException)?.code ?? '')) return undefined;
    throw error;
  };

/** Fsyncs a folder, so the entries renamed or created in it survive a crash (one a delete just removed has none). */
async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r').catch(ignoring('ENOENT'));
  if (!handle) return;
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function createFileStore(dir: string, options: StoreRootOptions = {}) {
  const root = resolve(dir);
  const ownRoot = storeRoot(root, options);

  /** The only way from ids to a path: both validated, and the result checked to stay under the root. */
  function locate(userId: string, videoId: string) {
    const ids = documentIds.parse({ userId, videoId });
    const folder = join(root, ids.userId);
    const path = join(folder, `${ids.videoId}.md`);
    const inside = relative(root, path);
    if (inside.startsWith('..') || isAbsolute(inside)) throw new Error(`stenogram path ${path} is outside ${root}`);
    return { folder, path, videoId: ids.videoId };
  }

  /** Writes a temporary file beside the target, fsyncs it; a folder removed meanwhile by delete is made again. */
  async function writeTemporary(folder: string, videoId: string, data: Buffer): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const temporary = join(folder, `.${videoId}.md.${randomBytes(8).toString('hex')}.tmp`);
      try {
        const created = await mkdir(folder, { recursive: true, mode: 0o700 });
        if (created !== undefined) await syncFolder(root);
        const handle = await open(temporary, 'wx', 0o600);
        try {
          await handle.writeFile(data);
          await handle.sync();
        } finally {
          await handle.close();
        }
        return temporary;
      } catch (error) {
        await rm(temporary, { force: true });
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw error;
      }
    }
  }

  /** Yields the documents of one user folder, removing temporary files a crash left behind. */
  async function* listFolder(userId: string) {
    const folder = join(root, userId);
    const entries = await readdir(folder, { withFileTypes: true }).catch(ignoring('ENOENT'));
    for (const entry of entries ?? []) {
      if (!entry.isFile()) continue;
      const path = join(folder, entry.name);
      const stats = await stat(path).catch(ignoring('ENOENT'));
      if (!stats) continue;
      if (temporaryName.test(entry.name)) {
        if (Date.now() - stats.mtimeMs > staleTemporaryMs) await rm(path, { force: true });
        continue;
      }
      const videoId = documentName.exec(entry.name)?.[1];
      if (videoId) yield { userId, videoId, modifiedAt: stats.mtime };
    }
  }

  return {
    location: `file:${root}`,

    /** Refused (StoreRootRefused) when the root is not the store's: an unmounted volume's empty mount point, say. */
    async put(userId: string, videoId: string, markdown: string) {
      const target = locate(userId, videoId);
      await ownRoot.ensure();
      const data = Buffer.from(markdown, 'utf8');
      const temporary = await writeTemporary(target.folder, target.videoId, data);
      try {
        await rename(temporary, target.path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      await syncFolder(target.folder);
      return { bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
    },

    async get(userId: string, videoId: string) {
      const { path } = locate(userId, videoId);
      return readFile(path, 'utf8').catch(ignoring('ENOENT'));
    },

    // Not fsynced: a deletion a crash undoes leaves a file without a row, which reconciling (list) finds.
    async delete(userId: string, videoId: string) {
      const { folder, path } = locate(userId, videoId);
      await unlink(path).catch(ignoring('ENOENT'));
      // The user's folder goes when it is empty; other documents or a put in progress (ENOTEMPTY) keep it.
      await rmdir(folder).catch(ignoring('ENOENT', 'ENOTEMPTY', 'EEXIST'));
    },

    /** Every document, walking the user folders; temporary files older than an hour are removed on the way. */
    async *list() {
      const users = await readdir(root, { withFileTypes: true }).catch(ignoring('ENOENT'));
      for (const entry of users ?? []) {
        // Only the folders put makes: lower-case uuids.
        if (entry.isDirectory() && documentIds.shape.userId.safeParse(entry.name).data === entry.name) yield* listFolder(entry.name);
      }
    },
  };
}

/**
 * How the file store knows its root is its own: a marker file written when the store is created. A
 * store whose volume is not mounted shows an empty mount point instead; writing there would report a
 * stenogram stored that nobody can read once the volume is back. Checked before every write.
 */
export const storeMarkerName = '.afterimage-store';
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
function storeRoot(root: string, options: StoreRootOptions = {}) {
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
