import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { connect, type Sql } from '../../core/db/database.ts';
import { withDatabaseName } from '../../core/db/database.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';

export interface TestDatabase {
  name: string;
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template: milliseconds, and isolated from other files. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = inject('templateDatabase');
  return createDatabase(`afterimage_test_${template.split('_').pop()}_${randomBytes(6).toString('hex')}`, `template ${template}`);
}

/** A fresh database with nothing in it: no schema, no migration applied. */
export const createEmptyDatabase = (): Promise<TestDatabase> => createDatabase(`afterimage_empty_${randomBytes(6).toString('hex')}`, '');

/**
 * A fresh database as migrate() left it before migration `version` (every earlier one applied and
 * recorded), to store the data of that time and then upgrade it: `apply()` runs that migration alone.
 */
export async function createDatabaseBefore(version: number): Promise<TestDatabase & { apply(): Promise<void> }> {
  const db = await createDatabase(`afterimage_migration_${randomBytes(6).toString('hex')}`, '');
  const migrations = await readMigrations();
  for (const migration of migrations.filter((m) => m.version < version)) {
    await db.sql.begin(async (tx) => {
      await tx.unsafe(migration.body);
      await tx`create table if not exists schema_migrations (version integer primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`;
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    });
  }
  const migration = migrations.find((m) => m.version === version)!;
  return { ...db, apply: () => db.sql.begin((tx) => tx.unsafe(migration.body)).then(() => undefined) };
}

async function createDatabase(name: string, options: string): Promise<TestDatabase> {
  const serverUrl = inject('serverUrl');
  const admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'test' });
  // FILE_COPY copies the template's files whole: a quarter of WAL_LOG's CPU (the default since PostgreSQL 15,
  // which writes every block through the WAL) on a cluster that keeps nothing across a crash anyway.
  await admin.unsafe(`create database ${name} ${options} strategy file_copy`);
  const url = withDatabaseName(serverUrl, name);
  const sql = connect(url, { max: 10, role: 'test' });
  return {
    name,
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      // Pools a test closed may still be ending their connections (graphile-worker's releases its own
      // after stop() returns): a forced drop would end them under the client, an error nobody listens for.
      for (let waited = 0; waited < 3_000; waited += 50) {
        const [{ left }] = await admin<[{ left: number }]>`select count(*)::int as left from pg_stat_activity where datname = ${name}`;
        if (left === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/**
 * A bare postgres.js pool on `url`, without the service's circuit or settings: for tests of the driver
 * itself. `options` may hold what postgres.js reads but its types leave out (max_pipeline).
 */
export function driverPool(url: string, options: Record<string, unknown>): postgres.Sql {
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  parsed.searchParams.delete('host');
  return postgres(parsed.toString(), { ...(socketDir ? { host: socketDir } : {}), onnotice: () => undefined, ...options });
}
