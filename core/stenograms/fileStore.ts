/**
 * Stenograms' Markdown on the local disk: `<root>/<userId>/<videoId>.md`, owner-only (0700 folders,
 * 0600 files: the documents are private), beside the marker that says the root is the store's
 * (fileStoreRoot.ts). Implements StenogramStore (store.ts, which imports this file).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { documentIds } from './documentIds.ts';
import { storeRoot, type StoreRootOptions } from './fileStoreRoot.ts';

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
