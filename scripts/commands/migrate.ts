import { migrate } from '../../core/db/migrate.ts';
import { output, parseOptions } from '../cli.ts';
import { DATABASE_CHOICE, dataDirOption, withChosenDatabase } from '../serviceDatabase.ts';

const USAGE = `usage: npx afterimage migrate [--data-dir DIR] [--json]
applies the database migrations this version has and the database has not (start does this too;
with several processes, run it once per release before they start). ${DATABASE_CHOICE}`;

/** `afterimage migrate`: applies what sql/ and graphile-worker have that the database has not, and says what. */
export async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, dataDirOption, { usage: USAGE });
  const result = await withChosenDatabase(values['data-dir'], (db, log) => migrate(db.sql, db.url, log), { migrate: false });
  output(values.json, result, () => (result.applied.length ? `applied ${result.applied.join(', ')}` : 'database is up to date'));
}
