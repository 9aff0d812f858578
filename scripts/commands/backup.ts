import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../../core/config.ts';
import { backupEmbedded, DamagedBackupError, extractBackup, verifyBackup } from '../../core/db/baseBackup.ts';
import { connect } from '../../core/db/database.ts';
import { openDatabase } from '../../core/db/openDatabase.ts';
import { runningServices } from '../../core/db/runningServices.ts';
import { createLogger } from '../../core/log.ts';
import { output, parseOptions, UsageError, version } from '../cli.ts';
import { progressBar } from '../progress.ts';
import { chooseDatabase, dataDirOption, describeService } from '../serviceDatabase.ts';

export const BACKUP_USAGE = `usage: afterimage backup [--out FILE] [--data-dir DIR] [--json]
writes one file (a gzipped tar, default ./afterimage-backup-<time>.tar.gz) holding the embedded
PostgreSQL of DATA_DIR (a base backup with the WAL it needs, taken while the service runs and writes),
the stenogram file store (DATA_DIR/stenograms) and the server key (DATA_DIR/secret.key), with a
manifest of every file's size and SHA-256. The database is the one named by --data-dir DIR or DATA_DIR,
else the running service's. With DATABASE_URL it says how to back up that server instead (pg_dump).
restore it with: afterimage restore FILE --data-dir NEW_DIR`;

export const RESTORE_USAGE = `usage: afterimage restore FILE [--data-dir DIR] [--json]
restores a file written by afterimage backup into DIR (default DATA_DIR, else ./.afterimage), which
must hold no database: the whole file is checked against its manifest first (a damaged or truncated
file is refused and nothing is written), then the cluster is started once so it recovers to the
moment the backup ended, and stopped. Start the service on DIR afterwards (DATA_DIR=DIR npm start).`;

const megabytes = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

/** What to run instead when the database is a server of the operator's own: pg_dump of its major version (or newer), and the files beside it. */
async function serverBackupAdvice(config: Config): Promise<string> {
  const sql = connect(config.DATABASE_URL!, { max: 1, role: 'backup' });
  const serverVersion = await sql<{ version: string }[]>`select current_setting('server_version') as version`
    .then(([row]) => row!.version)
    .catch(() => undefined)
    .finally(() => sql.end({ timeout: 1 }));
  const major = serverVersion?.split('.')[0];
  return [
    `DATABASE_URL names a PostgreSQL server of your own${serverVersion ? ` (version ${serverVersion})` : ''}; afterimage backup copies the embedded one only.`,
    `Back up the database with pg_dump ${major ? `${major} or newer` : "of the server's major version or newer"}: pg_dump --format=custom --file=afterimage.dump "$DATABASE_URL" (restore with pg_restore --no-owner --dbname=…).`,
    `Copy beside it: ${config.STENOGRAM_STORE === 'file' ? `the stenogram store ${join(config.dataDir, 'stenograms')}` : `the stenogram bucket ${config.STENOGRAM_STORE}`}, and the server key (SECRET_KEY, else ${join(config.dataDir, 'secret.key')}).`,
  ].join('\n');
}

/** `afterimage backup`: see BACKUP_USAGE and core/db/baseBackup.ts. */
export async function backupCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, { out: { type: 'string' }, ...dataDirOption }, { usage: BACKUP_USAGE });
  const { config, service } = await chooseDatabase(values['data-dir']);
  if (config.DATABASE_URL) throw new UsageError(await serverBackupAdvice(config));
  const out = resolve(values.out ?? `afterimage-backup-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`);
  if (existsSync(out)) throw new UsageError(`${out} exists; give another --out FILE (a backup never overwrites a file)`);
  const notes = [
    service ? `backing up the running service's database (${describeService(service)})` : '',
    config.STENOGRAM_STORE === 'file' ? '' : `stenograms live in ${config.STENOGRAM_STORE}: back up that bucket with its own tools`,
    process.env.SECRET_KEY ? 'SECRET_KEY is set in the environment: keep it apart from this backup (the file holds no copy)' : '',
  ].filter(Boolean);
  if (!values.json) for (const note of notes) process.stderr.write(`${note}\n`);

  const log = createLogger(config.LOG_LEVEL === 'debug' ? 'debug' : 'warn');
  const db = await openDatabase(config, log, 'backup');
  const copying = progressBar('backup');
  let result: Awaited<ReturnType<typeof backupEmbedded>>;
  try {
    result = await backupEmbedded(db, {
      dataDir: config.dataDir,
      out,
      afterimageVersion: version,
      stenogramDir: config.STENOGRAM_STORE === 'file' ? join(config.dataDir, 'stenograms') : undefined,
      onProgress: (copied, total, detail) => copying.update(Math.round(copied / 2 ** 20), Math.round(total / 2 ** 20), `MB ${detail}`),
      log,
    });
  } finally {
    await db.close();
  }
  const speed = result.bytes / 2 ** 20 / Math.max(result.seconds, 0.001);
  copying.done(`${megabytes(result.bytes)} MB read, ${megabytes(result.compressedBytes)} MB written (${speed.toFixed(1)} MB/s)`);
  output(
    values.json,
    {
      file: out,
      files: result.manifest.files.length,
      bytes: result.bytes,
      compressedBytes: result.compressedBytes,
      seconds: result.seconds,
      megabytesPerSecond: Number(speed.toFixed(1)),
      postgres: result.manifest.postgres,
      startLsn: result.manifest.startLsn,
      stopLsn: result.manifest.stopLsn,
    },
    () =>
      `backup written to ${out} (${result.manifest.files.length} files); restore it with: npx afterimage restore ${out} --data-dir NEW_DIR`,
  );
}

/** Why `dataDir` cannot be restored into, or undefined when it can. */
async function occupied(dataDir: string): Promise<string | undefined> {
  const service = (await runningServices()).find((running) => running.database.embedded && running.database.location === dataDir);
  if (service)
    return `an Afterimage service runs on ${dataDir} (${describeService(service)}): stop it, then restore into a new folder (--data-dir NEW_DIR)`;
  if (existsSync(join(dataDir, 'pg')))
    return `${dataDir} already holds a database (${join(dataDir, 'pg')}); restore into a new folder (--data-dir NEW_DIR), or stop its service and move ${dataDir} away first`;
  if ((await readdir(join(dataDir, 'stenograms')).catch(() => [])).length > 0)
    return `${join(dataDir, 'stenograms')} holds stenograms already; restore into a new folder (--data-dir NEW_DIR)`;
  return undefined;
}

/** `afterimage restore FILE`: see RESTORE_USAGE. */
export async function restoreCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseOptions(args, { ...dataDirOption }, { usage: RESTORE_USAGE, positionals: true });
  if (positionals.length !== 1) throw new UsageError(RESTORE_USAGE);
  const file = resolve(positionals[0]!);
  const config = loadConfig(values['data-dir'] === undefined ? process.env : { ...process.env, DATA_DIR: values['data-dir'] });
  if (config.DATABASE_URL)
    throw new UsageError(
      'DATABASE_URL is set: afterimage restore restores the embedded PostgreSQL of a DATA_DIR. Unset DATABASE_URL, or restore your server with pg_restore',
    );
  const dataDir = config.dataDir;
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new UsageError(`${file} is not a file; give a file written by afterimage backup`);
  const refusal = await occupied(dataDir);
  if (refusal) throw new UsageError(refusal);

  const checking = progressBar('checking');
  const manifest = await verifyBackup(file, (read) =>
    checking.update(Math.round(read / 2 ** 20), Math.round(info.size / 2 ** 20), 'MB'),
  ).catch((error) => {
    if (error instanceof DamagedBackupError) throw new Error(`${error.message}; nothing was restored`);
    throw error;
  });
  checking.done(`${manifest.files.length} files match the manifest`);
  const backedUpKey = manifest.files.find((entry) => entry.path === 'secret.key');
  const presentKey = await readFile(join(dataDir, 'secret.key')).catch(() => undefined);
  if (backedUpKey && presentKey)
    throw new UsageError(
      `${join(dataDir, 'secret.key')} exists and would be replaced by the backup's key; restore into a new folder (--data-dir NEW_DIR)`,
    );

  const log = createLogger(config.LOG_LEVEL === 'debug' ? 'debug' : 'warn');
  await extractBackup(file, dataDir, log);
  if (!values.json) process.stderr.write("restored the files; starting the database once so it replays the backup's WAL\n");
  // The first start recovers to the backup's end; a query then shows it opens, and close stops it again.
  const db = await openDatabase(config, log, 'restore');
  try {
    await db.sql`select 1`;
  } catch (error) {
    throw new Error(`the restored database in ${dataDir} did not open (see ${join(dataDir, 'postgres.log')}): ${(error as Error).message}`);
  } finally {
    await db.close();
  }
  output(
    values.json,
    { dataDir, files: manifest.files.length, createdAt: manifest.createdAt, afterimage: manifest.afterimage, postgres: manifest.postgres },
    () =>
      `restored the backup of ${manifest.createdAt} (Afterimage ${manifest.afterimage}, PostgreSQL ${manifest.postgres}) into ${dataDir}; start the service on it: DATA_DIR=${dataDir} npm start`,
  );
}
