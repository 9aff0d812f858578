import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import chromium from '@sparticuz/chromium';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../core/config.ts';
import { connect, withDatabaseName } from '../../core/db/database.ts';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { migrate } from '../../core/db/migrate.ts';
import { createLogger, type Logger } from '../../core/log.ts';
import { processAlive } from '../../core/processAlive.ts';
import { withDatabase } from '../../scripts/cli.ts';
import { chooseTestDataRoot, inMemoryRoot } from './dataRoot.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    serverUrl: string;
    templateDatabase: string;
    /** Where the run's cluster lives, and the clusters test files start (temporaryDataDir). */
    dataRoot: string;
    /** A DATA_DIR whose stopped embedded cluster has every migration applied, copied by temporaryDataDir({ migrated: true }). */
    migratedDataDir: string;
  }
}

/**
 * The test cluster holds nothing that must outlive a crash of the machine: no flushes to disk, no full-page
 * images, commits not waited for (the files that kill a postmaster run clusters of their own). It holds little
 * data either: the service's quarter of memory as shared_buffers (4 GB here) made every dropped database's
 * scan of the buffers cost 70–100 ms of CPU under the suite's load (25 CPU-seconds a run; 2 at 256 MB).
 */
const TEST_CLUSTER_SETTINGS = ['fsync = off', 'full_page_writes = off', 'synchronous_commit = off', 'shared_buffers = 256MB'];

/**
 * One PostgreSQL for the whole run (TEST_DATABASE_URL, else an embedded cluster under chooseTestDataRoot()),
 * and one migrated template database that every test file clones.
 */
export default async function setup(project: TestProject) {
  const log = createLogger('warn');
  // Built once here, not by the first of the many `afterimage` processes the tests start at once.
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' });
  // Chromium unpacks itself to the temporary folder at its first launch on a machine: the browser files of two
  // forks starting at once had one launch the binary while the other still wrote it (spawn ETXTBSY).
  const chromiumBinary = await chromium.executablePath();
  const dataDir = chooseTestDataRoot();
  if (inMemoryRoot(dataDir)) await temporaryFolderIn(dataDir, chromiumBinary);
  // This run's own: another run of this checkout at the same time may be copying its own.
  const migratedDataDir = join(dataDir, `migrated-${process.pid}`);
  const [serverUrl] = await Promise.all([
    process.env.TEST_DATABASE_URL ?? ensureEmbeddedPostgres(dataDir, log, TEST_CLUSTER_SETTINGS),
    prepareMigratedDataDir(migratedDataDir, log),
  ]);
  const template = `afterimage_template_${process.pid}`;
  const admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'test-setup' });
  await admin.unsafe(`drop database if exists ${template}`);
  await admin.unsafe(`create database ${template}`);
  const templateSql = connect(withDatabaseName(serverUrl, template), { max: 2, role: 'test-setup' });
  await migrate(templateSql, withDatabaseName(serverUrl, template), log);
  await templateSql.end();
  project.provide('serverUrl', serverUrl);
  project.provide('templateDatabase', template);
  project.provide('dataRoot', dataDir);
  project.provide('migratedDataDir', migratedDataDir);

  return async () => {
    await rm(migratedDataDir, { recursive: true, force: true });
    const leftovers = await admin<
      { datname: string }[]
    >`select datname from pg_database where datname like ${`afterimage_test_${process.pid}_%`} or datname = ${template}`;
    for (const { datname } of leftovers) await admin.unsafe(`drop database if exists ${datname} with (force)`);
    // Another test run (or process) may share this cluster: the last one out stops it.
    const [others] = await admin<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where application_name like 'afterimage:%' and pid <> pg_backend_pid()`;
    await admin.end();
    if (process.env.TEST_DATABASE_URL || others?.n !== 0) return;
    await stopEmbeddedPostgres(dataDir, log);
    if (inMemoryRoot(dataDir)) await rm(dataDir, { recursive: true, force: true });
  };
}

/**
 * An embedded cluster initialised and migrated as a first start leaves it, then stopped: the files that start
 * services on a DATA_DIR of their own copy it (about 0.1 CPU-s) instead of each running initdb and every
 * migration (1.4 CPU-s more than a start). Made by every run for itself, beside the run's cluster.
 */
async function prepareMigratedDataDir(dir: string, log: Logger) {
  // Those of runs that were killed before their teardown.
  for (const name of await readdir(dirname(dir)).catch(() => [])) {
    const pid = /^migrated-(\d+)$/.exec(name)?.[1];
    if (!pid || processAlive(Number(pid))) continue;
    await stopEmbeddedPostgres(join(dirname(dir), name), log).catch(() => undefined);
    await rm(join(dirname(dir), name), { recursive: true, force: true });
  }
  // What `afterimage migrate --data-dir` does: start the cluster, migrate, stop it again as nothing else uses it.
  await withDatabase(async () => undefined, { config: loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn' }) });
}

/**
 * The temporary folder (TMPDIR) of the forks and of every process they start, in memory beside the clusters: the
 * test files write archives of thousands of files there, and a 4,000-video archive cost 2.2 CPU-s on this
 * machine's ext4, 0.6 in memory. Chromium stays unpacked where it was (linked in), so no fork unpacks it again.
 */
async function temporaryFolderIn(dataDir: string, chromiumBinary: string) {
  const dir = join(dataDir, 'tmp');
  await mkdir(dir, { recursive: true });
  // As /tmp: the postgres OS user and the non-root user of the tests write there too.
  await chmod(dir, 0o1777);
  await symlink(chromiumBinary, join(dir, 'chromium')).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  process.env.TMPDIR = dir;
}
