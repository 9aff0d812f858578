import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { connect, withDatabaseName } from '../../core/db/database.ts';
import { MIGRATION_LOCK } from '../../core/db/migrate.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';
import { schemaIsCurrent } from '../../core/db/schemaIsCurrent.ts';
import { withDatabase } from '../../scripts/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// Operator commands skip migrate when one query shows the schema current, and only then.

let db: TestDatabase;
const admin = () => connect(withDatabaseName(inject('serverUrl'), 'postgres'), { max: 1, role: 'test' });
const emptyDatabases: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  const sql = admin();
  for (const name of emptyDatabases) await sql.unsafe(`drop database if exists ${name} with (force)`);
  await sql.end();
});

/** A database with nothing in it, named like the harness's so its teardown removes it should this file die first. */
async function emptyDatabase(): Promise<string> {
  const name = `afterimage_test_${inject('templateDatabase').split('_').pop()}_${randomBytes(6).toString('hex')}`;
  const sql = admin();
  await sql.unsafe(`create database ${name}`);
  await sql.end();
  emptyDatabases.push(name);
  return withDatabaseName(inject('serverUrl'), name);
}

describe('schemaIsCurrent', () => {
  it('is true on a migrated database', async () => {
    expect(await schemaIsCurrent(db.sql)).toBe(true);
  });

  it('is false when the newest file of sql/ is not recorded, or recorded with another checksum', async () => {
    const newest = (await readMigrations()).at(-1)!;
    const [recorded] = await db.sql`delete from schema_migrations where version = ${newest.version} returning *`;
    try {
      expect(await schemaIsCurrent(db.sql)).toBe(false);
    } finally {
      await db.sql`insert into schema_migrations ${db.sql(recorded!)}`;
    }
    await db.sql`update schema_migrations set checksum = 'edited' where version = ${newest.version}`;
    try {
      expect(await schemaIsCurrent(db.sql)).toBe(false);
    } finally {
      await db.sql`update schema_migrations set checksum = ${newest.checksum} where version = ${newest.version}`;
    }
    expect(await schemaIsCurrent(db.sql)).toBe(true);
  });

  it("is false when graphile-worker's newest revision is not recorded", async () => {
    const [newest] =
      await db.sql`delete from graphile_worker.migrations where id = (select max(id) from graphile_worker.migrations) returning *`;
    try {
      expect(await schemaIsCurrent(db.sql)).toBe(false);
    } finally {
      await db.sql`insert into graphile_worker.migrations ${db.sql(newest!)}`;
    }
  });

  it('is false on a database never migrated', async () => {
    const sql = connect(await emptyDatabase(), { max: 1, role: 'test' });
    try {
      expect(await schemaIsCurrent(sql)).toBe(false);
    } finally {
      await sql.end();
    }
  });
});

describe('withDatabase (every operator command)', () => {
  it('does not migrate a current database: it does not wait for a migration holding the lock', async () => {
    const holder = await db.sql.reserve();
    await holder`select pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      const ran = withDatabase(async () => 'ran', { config: loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'warn' }) });
      const waited = new Promise((resolve) => setTimeout(resolve, 10_000, 'waited for the migration lock'));
      expect(await Promise.race([ran, waited])).toBe('ran');
    } finally {
      await holder`select pg_advisory_unlock(${MIGRATION_LOCK})`;
      holder.release();
    }
  });

  it('migrates a database that is not current before the command runs', async () => {
    const url = await emptyDatabase();
    const versions = await withDatabase(
      async (opened) => (await opened.sql<{ version: number }[]>`select version from schema_migrations`).length,
      {
        config: loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'warn' }),
      },
    );
    expect(versions).toBe((await readMigrations()).length);
  });
});
