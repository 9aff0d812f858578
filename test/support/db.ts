import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connect, type Sql } from '../../core/db/database.ts';
import { withDatabaseName } from '../../core/db/database.ts';

export interface TestDatabase {
  name: string;
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template: milliseconds, and isolated from other files. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject('serverUrl');
  const template = inject('templateDatabase');
  const name = `afterimage_test_${template.split('_').pop()}_${randomBytes(6).toString('hex')}`;
  const admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'test' });
  await admin.unsafe(`create database ${name} template ${template}`);
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
