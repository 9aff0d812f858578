import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connect, withDatabaseName, type Sql } from '../../core/db/database.ts';
import { readMigrations } from '../../core/db/migrate.ts';

/**
 * A fresh database as migrate() left it before migration `version`: every earlier migration applied and
 * recorded, so that migrate() then applies the rest as the service does at start.
 */
export async function databaseBefore(version: number): Promise<{ sql: Sql; url: string; drop(): Promise<void> }> {
  const name = `afterimage_migration_${randomBytes(6).toString('hex')}`;
  const admin = connect(withDatabaseName(inject('serverUrl'), 'postgres'), { max: 1, role: 'test' });
  await admin.unsafe(`create database ${name}`);
  const url = withDatabaseName(inject('serverUrl'), name);
  const sql = connect(url, { max: 2, role: 'test' });
  for (const migration of (await readMigrations()).filter((m) => m.version < version)) {
    await sql.begin(async (tx) => {
      await tx.unsafe(migration.body);
      await tx`create table if not exists schema_migrations (version integer primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`;
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    });
  }
  return {
    sql,
    url,
    async drop() {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
