import { runMigrations } from 'graphile-worker';
import { graphileLogger, type Logger } from '../log.ts';
import type { Queryable, Sql } from './database.ts';
import { readMigrations } from './readMigrations.ts';
import { normalizeStoredEmails } from './normalizeStoredEmails.ts';
import { splitTrackNames } from './splitTrackNames.ts';

/** An arbitrary advisory-lock key shared by every migrating process. */
export const MIGRATION_LOCK = 7_246_153;

/** Data fixes that need the application's code (a parser SQL does not have), run in their migration's transaction. */
const DATA_STEPS = new Map<number, (tx: Queryable, log: Logger) => Promise<void>>([
  [31, splitTrackNames],
  [43, normalizeStoredEmails],
]);

/**
 * Applies the numbered files of sql/ (or `migrationsDir`) the database lacks, in order and all in one
 * transaction, then graphile-worker's own. A migration that fails rolls every one of them back: the
 * database stays as the previous release left it (which can keep serving), and the error names the
 * migration and PostgreSQL's reason. Safe to run from several processes at once and to re-run:
 * applied versions are recorded and skipped.
 */
export async function migrate(sql: Sql, url: string, log: Logger, migrationsDir?: string): Promise<{ applied: string[] }> {
  const migrations = await readMigrations(migrationsDir);
  const applied = await sql.begin(async (tx) => {
    // The transaction-scoped lock makes concurrent migrators take turns; the check inside it makes re-runs no-ops.
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`;
    const recorded = new Map(
      (await tx<{ version: number; checksum: string }[]>`select version, checksum from schema_migrations`).map((row) => [
        row.version,
        row.checksum,
      ]),
    );
    const files: string[] = [];
    for (const migration of migrations) {
      const checksum = recorded.get(migration.version);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(
            `sql/${migration.file} was changed after it was applied; add a new numbered migration instead of editing an applied one`,
          );
        }
        continue;
      }
      try {
        await tx.unsafe(migration.body);
        await DATA_STEPS.get(migration.version)?.(tx, log);
      } catch (error) {
        const { message, detail } = error as { message: string; detail?: string };
        throw new Error(
          `migration sql/${migration.file} failed: ${message}${detail ? ` (${detail})` : ''}. No migration was applied: the database is as it was before this upgrade`,
        );
      }
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
      files.push(migration.file);
    }
    return files;
  });
  for (const file of applied) log.info('migration applied', { migration: file });
  await runMigrations({ connectionString: url, logger: await graphileLogger(log) });
  return { applied };
}
