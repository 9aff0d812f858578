// graphile-worker exports no figure for its newest schema revision; its migrations' file names are it.
// A move of this file in an upgrade fails the type check here.
import { migrations as workerMigrations } from 'graphile-worker/dist/generated/sql.js';
import type { Sql } from './database.ts';
import { readMigrations } from './readMigrations.ts';

/** graphile-worker's newest schema revision ("000019.sql" is 19), the number it records in graphile_worker.migrations. */
const WORKER_REVISION = Math.max(...Object.keys(workerMigrations).map((file) => Number.parseInt(file, 10)));

/** undefined_table, invalid_schema_name: a database that was never migrated. */
const NOT_MIGRATED = new Set(['42P01', '3F000']);

/**
 * Whether the database already holds exactly the migrations of sql/ (same versions, same checksums)
 * and graphile-worker's newest revision, read in one query: then a command need not run migrate
 * (a transaction per file and graphile-worker's own check). Anything else is false, a database
 * never migrated included, and migrate runs with all its checks (an edited migration stops it).
 */
export async function schemaIsCurrent(sql: Sql): Promise<boolean> {
  const files = await readMigrations();
  let state: { applied: Array<{ version: number; checksum: string }>; workerRevision: number | null } | undefined;
  try {
    [state] = await sql<NonNullable<typeof state>[]>`
      select
        (select coalesce(json_agg(json_build_object('version', version, 'checksum', checksum) order by version), '[]')
         from schema_migrations) as applied,
        (select max(id) from graphile_worker.migrations) as "workerRevision"`;
  } catch (error) {
    if (NOT_MIGRATED.has((error as { code?: string }).code ?? '')) return false;
    throw error;
  }
  return (
    state !== undefined &&
    state.workerRevision === WORKER_REVISION &&
    state.applied.length === files.length &&
    files.every((file, index) => state.applied[index]!.version === file.version && state.applied[index]!.checksum === file.checksum)
  );
}
