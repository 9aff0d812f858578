import { runMigrations } from 'graphile-worker';
import { graphileLogger } from '../graphileLogger.ts';
import type { Logger } from '../log.ts';
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
 * Applies the numbered files of sql/ in order, each in its own transaction, then graphile-worker's own.
 * Safe to run from several processes at once and to re-run: applied versions are recorded and skipped.
 */
export async function migrate(sql: Sql, url: string, log: Logger): Promise<{ applied: string[] }> {
  const migrations = await readMigrations();
  const applied: string[] = [];
  for (const migration of migrations) {
    // The transaction-scoped lock makes concurrent migrators take turns; the check inside it makes re-runs no-ops.
    const ran = await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await tx`
        create table if not exists schema_migrations (
          version integer primary key,
          name text not null,
          checksum text not null,
          applied_at timestamptz not null default now()
        )`;
      const [recorded] = await tx<{ checksum: string }[]>`select checksum from schema_migrations where version = ${migration.version}`;
      if (recorded) {
        if (recorded.checksum !== migration.checksum) {
          throw new Error(
            `sql/${migration.file} was changed after it was applied; add a new numbered migration instead of editing an applied one`,
          );
        }
        return false;
      }
      await tx.unsafe(migration.body);
      await DATA_STEPS.get(migration.version)?.(tx, log);
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
      return true;
    });
    if (ran) {
      applied.push(migration.file);
      log.info('migration applied', { migration: migration.file });
    }
  }
  await runMigrations({ connectionString: url, logger: graphileLogger(log) });
  return { applied };
}
