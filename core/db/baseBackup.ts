/**
 * A backup of an embedded DATA_DIR taken while the service runs: PostgreSQL's low-level base backup
 * (pg_backup_start, a copy of the data directory, pg_backup_stop) with the WAL from its start to its
 * stop, the stenogram file store and the server key, in one gzipped tar whose last entry is a
 * manifest (each file's size and SHA-256). Nothing outside Node and the embedded binaries is needed.
 * A restore checks the whole file against its manifest before it writes anything, and the restored
 * cluster replays the included WAL from its backup_label at its first start (no recovery.signal:
 * the WAL it needs is in pg_wal, so it recovers to the backup's end and opens).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chown, lstat, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { Header, type HeaderData, Parser, Pax, type ReadEntry, extract } from 'tar';
import type { Logger } from '../log.ts';
import type { Database } from './openDatabase.ts';
import { embeddedLayout, postgresOsUser } from './embedded.ts';

const MANIFEST = 'afterimage-backup.json';
const FORMAT = 'afterimage-backup';
const FORMAT_VERSION = 1;
const BLOCK = 512;
const CHUNK = 1 << 20;

interface BackupFile {
  path: string;
  size: number;
  sha256: string;
}
export interface BackupManifest {
  format: typeof FORMAT;
  version: typeof FORMAT_VERSION;
  afterimage: string;
  createdAt: string;
  postgres: string;
  startLsn: string;
  stopLsn: string;
  files: BackupFile[];
}

export type BackupProgress = (copiedBytes: number, totalBytes: number, detail: string) => void;

/**
 * What the documentation of continuous archiving says a base backup leaves out: the contents of these
 * folders (the folders themselves are kept; pg_wal gets the backup's own segments), these files, and
 * temporary files and relations anywhere.
 */
const EMPTIED_FOLDERS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_stat_tmp',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_subtrans',
]);
const LEFT_OUT_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'tablespace_map',
  'backup_manifest',
  'postgresql.auto.conf.tmp',
  'current_logfiles.tmp',
]);
const leftOut = (name: string, inDatabaseFolder: boolean) =>
  name.startsWith('pgsql_tmp') || name.startsWith('pg_internal.init') || (inDatabaseFolder && /^t\d+_\d+/.test(name));

interface Source {
  /** The path inside the backup (and inside DATA_DIR once restored). */
  path: string;
  /** Where it is read from; undefined for a folder. */
  file?: string;
  mode: number;
  mtime: Date;
  size: number;
}

/** The files and folders of the data directory a base backup copies, in walk order (folders before their files). */
async function dataDirectorySources(pgDir: string): Promise<Source[]> {
  const sources: Source[] = [];
  const walk = async (dir: string, inBackup: string, depth: number, emptied: boolean) => {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // dropped while we walked
      throw error;
    }
    for (const name of names) {
      const inDatabaseFolder = depth === 2 && inBackup.startsWith('pg/base/');
      if ((depth === 0 && LEFT_OUT_FILES.has(name)) || leftOut(name, inDatabaseFolder)) continue;
      const info = await lstat(join(dir, name)).catch(() => undefined);
      if (!info) continue;
      const path = `${inBackup}/${name}`;
      if (info.isDirectory()) {
        if (emptied && !path.startsWith('pg/pg_wal/')) continue;
        sources.push({ path, mode: info.mode & 0o7777, mtime: info.mtime, size: 0 });
        // pg_wal keeps its sub-folders (archive_status, summaries), none of its segments; the others keep nothing.
        await walk(join(dir, name), path, depth + 1, emptied || (depth === 0 && EMPTIED_FOLDERS.has(name)));
      } else if (info.isFile() && !emptied) {
        sources.push({ path, file: join(dir, name), mode: info.mode & 0o7777, mtime: info.mtime, size: info.size });
      } else if (info.isSymbolicLink()) {
        throw new Error(
          `${join(dir, name)} is a symbolic link (a tablespace or a moved pg_wal): this backup copies a plain data directory only`,
        );
      }
    }
  };
  // PostgreSQL refuses to start on a data directory that others may read: the folder keeps its mode.
  const root = await stat(pgDir);
  sources.push({ path: 'pg', mode: root.mode & 0o7777, mtime: root.mtime, size: 0 });
  await walk(pgDir, 'pg', 0, false);
  return sources;
}

/** Every file under a folder (stenograms), as sources under `inBackup`. */
async function folderSources(dir: string, inBackup: string): Promise<Source[]> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return [];
  const sources: Source[] = [{ path: inBackup, mode: info.mode & 0o7777, mtime: info.mtime, size: 0 }];
  for (const entry of (await readdir(dir, { recursive: true, withFileTypes: true })).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    const file = join(entry.parentPath, entry.name);
    const path = `${inBackup}/${file.slice(dir.length + 1)}`;
    const entryInfo = await lstat(file);
    if (entry.isDirectory()) sources.push({ path, mode: entryInfo.mode & 0o7777, mtime: entryInfo.mtime, size: 0 });
    else if (entry.isFile()) sources.push({ path, file, mode: entryInfo.mode & 0o7777, mtime: entryInfo.mtime, size: entryInfo.size });
  }
  return sources;
}

/** A gzipped tar written entry by entry, each file's bytes hashed as they are written. */
function tarWriter(out: string) {
  const gzip = createGzip({ level: 1 });
  const done = pipeline(gzip, createWriteStream(out, { mode: 0o600 }));
  done.catch(() => undefined); // awaited in finish(); a write error also surfaces there
  const write = async (chunk: Buffer) => {
    if (!gzip.write(chunk)) await new Promise((drained) => gzip.once('drain', drained));
  };
  const header = async (data: HeaderData) => {
    const block = Buffer.alloc(BLOCK);
    const entry = new Header({ uid: 0, gid: 0, ...data });
    if (entry.encode(block)) await write(new Pax({ ...data }).encode());
    await write(block);
  };
  const pad = (size: number) => (size % BLOCK ? write(Buffer.alloc(BLOCK - (size % BLOCK))) : undefined);
  return {
    files: [] as BackupFile[],
    async folder(path: string, mode: number, mtime: Date) {
      await header({ path: `${path}/`, type: 'Directory', mode, mtime, size: 0 });
    },
    async buffer(path: string, data: Buffer, mode = 0o600) {
      await header({ path, type: 'File', mode, mtime: new Date(), size: data.length });
      await write(data);
      await pad(data.length);
      this.files.push({ path, size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
    },
    /**
     * Copies a file as large as it is when opened: bytes appended meanwhile are left out and a file
     * truncated meanwhile is padded with zeros, as pg_basebackup does (the WAL replay rewrites both).
     * Undefined when the file was removed before it was opened (a dropped table: replay drops it too).
     */
    async file(path: string, source: string, mode: number, mtime: Date, onBytes: (bytes: number) => void): Promise<number | undefined> {
      const handle = await open(source, 'r').catch((error) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      });
      if (!handle) return undefined;
      try {
        const { size } = await handle.stat();
        await header({ path, type: 'File', mode, mtime, size });
        const hash = createHash('sha256');
        for (let position = 0; position < size; ) {
          const buffer = Buffer.alloc(Math.min(CHUNK, size - position));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
          // bytesRead 0: truncated meanwhile; the rest of `buffer` stays zeros.
          const chunk = bytesRead === 0 ? buffer : buffer.subarray(0, bytesRead);
          hash.update(chunk);
          await write(chunk);
          position += chunk.length;
          onBytes(chunk.length);
        }
        await pad(size);
        this.files.push({ path, size, sha256: hash.digest('hex') });
        return size;
      } finally {
        await handle.close();
      }
    },
    async finish() {
      await write(Buffer.alloc(BLOCK * 2));
      gzip.end();
      await done;
    },
    abort() {
      gzip.destroy();
    },
  };
}

/** WAL segment names from the one holding `startLsn`'s to the one holding `stopLsn`'s, as pg_walfile_name names them. */
function walSegments(startName: string, stopName: string, segmentBytes: number): string[] {
  const perLogFile = 0x1_0000_0000 / segmentBytes;
  const number = (name: string) => Number.parseInt(name.slice(8, 16), 16) * perLogFile + Number.parseInt(name.slice(16, 24), 16);
  const timeline = stopName.slice(0, 8);
  const hex = (value: number) => value.toString(16).toUpperCase().padStart(8, '0');
  const names: string[] = [];
  for (let segment = number(startName); segment <= number(stopName); segment++)
    names.push(`${timeline}${hex(Math.floor(segment / perLogFile))}${hex(segment % perLogFile)}`);
  return names;
}

export interface BackupResult {
  manifest: BackupManifest;
  /** Bytes read from the data directory, WAL, stenograms and key. */
  bytes: number;
  compressedBytes: number;
  seconds: number;
}

/**
 * Writes the backup of DATA_DIR's running embedded cluster (`db`, opened on it) into `out` (written
 * as `out.partial`, renamed when complete). The WAL the copy needs is held by a temporary replication
 * slot of the backup's own session, so no checkpoint recycles it before it is copied.
 */
export async function backupEmbedded(
  db: Database,
  options: { dataDir: string; out: string; afterimageVersion: string; stenogramDir?: string; onProgress: BackupProgress; log: Logger },
): Promise<BackupResult> {
  const started = Date.now();
  const { pgDir } = embeddedLayout(options.dataDir);
  const partial = `${options.out}.partial`;
  const tar = tarWriter(partial);
  const session = await db.sql.reserve();
  let copied = 0;
  try {
    await session`set statement_timeout = 0`;
    const [{ version, segmentBytes }] = await session<[{ version: string; segmentBytes: string }]>`
      select current_setting('server_version') as version,
        (select setting::bigint * (case unit when '8kB' then 8192 when 'MB' then 1048576 else 1 end)
         from pg_settings where name = 'wal_segment_size')::text as "segmentBytes"`;
    await session`select pg_create_physical_replication_slot(${`afterimage_backup_${process.pid}`}, true, true)`;
    const [{ startLsn }] = await session<[{ startLsn: string }]>`
      select pg_backup_start(${`afterimage backup ${new Date().toISOString()}`}, fast => true)::text as "startLsn"`;

    const sources = await dataDirectorySources(pgDir);
    let total = sources.reduce((sum, source) => sum + source.size, 0);
    const copy = async (source: Source) => {
      if (!source.file) return tar.folder(source.path, source.mode, source.mtime);
      await tar.file(source.path, source.file, source.mode, source.mtime, (bytes) => {
        copied += bytes;
        options.onProgress(copied, total, source.path);
      });
    };
    for (const source of sources) await copy(source);

    const [stop] = await session<{ stopLsn: string; labelFile: string; mapFile: string; startWal: string; stopWal: string }[]>`
      select lsn::text as "stopLsn", labelfile as "labelFile", spcmapfile as "mapFile",
        pg_walfile_name(${startLsn}::pg_lsn) as "startWal", pg_walfile_name(lsn) as "stopWal"
      from pg_backup_stop(wait_for_archive => false)`;
    await tar.buffer('pg/backup_label', Buffer.from(stop!.labelFile));
    if (stop!.mapFile) await tar.buffer('pg/tablespace_map', Buffer.from(stop!.mapFile));
    const walDir = join(pgDir, 'pg_wal');
    const history = (await readdir(walDir)).filter((name) => name.endsWith('.history'));
    for (const name of [...history, ...walSegments(stop!.startWal, stop!.stopWal, Number(segmentBytes))]) {
      const info = await stat(join(walDir, name)).catch(() => undefined);
      const size = info && (await tar.file(`pg/pg_wal/${name}`, join(walDir, name), 0o600, info.mtime, (bytes) => (copied += bytes)));
      if (size === undefined) throw new Error(`the WAL segment ${name} the backup needs is gone from ${walDir}; run the backup again`);
    }
    await session`select pg_drop_replication_slot(${`afterimage_backup_${process.pid}`})`;

    // Stenograms and the key after the stop: every row the backup holds has its file (the store never
    // deletes a row whose file is missing, and files newer than the backup's rows are adopted or ignored).
    const stenograms = options.stenogramDir ? await folderSources(options.stenogramDir, 'stenograms') : [];
    total = copied + stenograms.reduce((sum, source) => sum + source.size, 0);
    for (const source of stenograms) await copy(source);
    const key = await readFile(join(options.dataDir, 'secret.key')).catch(() => undefined);
    if (key) await tar.buffer('secret.key', key);

    const manifest: BackupManifest = {
      format: FORMAT,
      version: FORMAT_VERSION,
      afterimage: options.afterimageVersion,
      createdAt: new Date().toISOString(),
      postgres: version,
      startLsn,
      stopLsn: stop!.stopLsn,
      files: tar.files,
    };
    await tar.buffer(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 1)));
    await tar.finish();
    await rename(partial, options.out);
    return { manifest, bytes: copied, compressedBytes: (await stat(options.out)).size, seconds: (Date.now() - started) / 1000 };
  } catch (error) {
    tar.abort();
    await rm(partial, { force: true });
    throw error;
  } finally {
    // Ends the session: an unfinished pg_backup_start is aborted and the temporary slot dropped with it.
    session.release();
  }
}

/** The backup file cannot be restored: damaged, truncated, or not an Afterimage backup. */
export class DamagedBackupError extends Error {}

/**
 * Reads the whole file and checks every entry against the manifest (present, same size and SHA-256,
 * nothing else) without writing anything; answers the manifest.
 */
export async function verifyBackup(file: string, onProgress: (bytesRead: number) => void = () => undefined): Promise<BackupManifest> {
  const found = new Map<string, BackupFile>();
  let manifestText: string | undefined;
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      if (entry.type !== 'File') {
        entry.resume();
        return;
      }
      const hash = createHash('sha256');
      const chunks: Buffer[] = [];
      let size = 0;
      entry.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
        if (entry.path === MANIFEST) chunks.push(chunk);
      });
      entry.on('end', () => {
        if (entry.path === MANIFEST) manifestText = Buffer.concat(chunks).toString('utf8');
        else found.set(entry.path, { path: entry.path, size, sha256: hash.digest('hex') });
      });
    },
  });
  try {
    const reading = createReadStream(file);
    let read = 0;
    reading.on('data', (chunk) => onProgress((read += chunk.length)));
    await pipeline(reading, createGunzip(), parser);
  } catch (error) {
    throw new DamagedBackupError(`${file} is damaged or not an Afterimage backup (${(error as Error).message})`);
  }
  if (manifestText === undefined)
    throw new DamagedBackupError(`${file} has no manifest (${MANIFEST}): it is truncated or not an Afterimage backup`);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(manifestText);
  } catch {
    throw new DamagedBackupError(`${file}: its manifest is not JSON`);
  }
  if (manifest.format !== FORMAT || manifest.version !== FORMAT_VERSION)
    throw new DamagedBackupError(`${file} is not an Afterimage backup of format ${FORMAT_VERSION}`);
  const problems: string[] = [];
  for (const expected of manifest.files) {
    const actual = found.get(expected.path);
    if (!actual) problems.push(`${expected.path} is missing`);
    else if (actual.size !== expected.size || actual.sha256 !== expected.sha256)
      problems.push(`${expected.path} differs from the manifest (${actual.size} bytes, expected ${expected.size})`);
    found.delete(expected.path);
  }
  for (const extra of found.keys()) problems.push(`${extra} is not in the manifest`);
  if (problems.length)
    throw new DamagedBackupError(
      `${file} is damaged: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`,
    );
  return manifest;
}

/**
 * Extracts a verified backup into `dataDir` (which holds no cluster); run as root, the cluster's
 * files are given to the postgres OS user that runs it. The first start then recovers it.
 */
export async function extractBackup(file: string, dataDir: string, log: Logger): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const { pgDir } = embeddedLayout(dataDir);
  try {
    await extract({ file, cwd: dataDir, strict: true, filter: (path) => path !== MANIFEST });
    const user = await postgresOsUser(log);
    if (user) {
      await chown(pgDir, user.uid, user.gid);
      for (const entry of await readdir(pgDir, { recursive: true })) await chown(join(pgDir, entry), user.uid, user.gid);
    }
  } catch (error) {
    await rm(pgDir, { recursive: true, force: true });
    throw error;
  }
}
