import { migrate } from '../../core/db/migrate.ts';
import { output, parseOptions, withDatabase } from '../cli.ts';

/** `afterimage migrate`: applies what sql/ and graphile-worker have that the database has not, and says what. */
export async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, {});
  const result = await withDatabase((db, log) => migrate(db.sql, db.url, log), { migrate: false });
  output(values.json, result, () => (result.applied.length ? `applied ${result.applied.join(', ')}` : 'database is up to date'));
}
