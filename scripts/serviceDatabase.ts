/**
 * Which database an operator command uses (every one that touches it, the same rule): the one named
 * (--data-dir, or DATA_DIR / DATABASE_URL in the environment), else the one the Afterimage service
 * running on this machine uses, so nothing is written where no service reads. Several services on
 * different databases, or none, and nothing named: a usage error (exit 2) that lists them and says how to pick.
 */
import { loadConfig, type Config } from '../core/config.ts';
import type { Database } from '../core/db/openDatabase.ts';
import { describeDatabaseLocation, sameDatabase, type DatabaseLocation } from '../core/db/databaseLocation.ts';
import { runningServices, type RunningService } from '../core/db/runningServices.ts';
import type { Logger } from '../core/log.ts';
import { UsageError, withDatabase } from './cli.ts';

/** The option of every command that uses the database, and the line its usage says about it. */
export const dataDirOption = { 'data-dir': { type: 'string' } } as const;
export const DATABASE_CHOICE =
  "The database: the one --data-dir DIR (the embedded PostgreSQL in DIR), DATA_DIR or DATABASE_URL names, else the running service's.";

export interface ChosenDatabase {
  config: Config;
  /** The running service whose database this is, when none was named. */
  service?: RunningService;
}

const HOW_TO_PICK =
  'Name the database: --data-dir DIR for the embedded PostgreSQL in DIR (the default DATA_DIR is ./.afterimage), or DATABASE_URL=postgres://… in the environment.';

/** One line per service: its pid and role, where its API listens, its database. */
export const describeService = (service: RunningService) =>
  `pid ${service.pid} (${service.role})${service.url ? ` at ${service.url}` : ''}: ${describeDatabaseLocation(service.database)}`;

/** The option to give for a database, as an operator would type it. */
function pickOption(database: DatabaseLocation): string {
  return database.embedded ? `--data-dir ${database.location}` : `DATABASE_URL=${database.location}`;
}

export async function chooseDatabase(dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<ChosenDatabase> {
  const named = (key: string) => (env[key] ?? '') !== '';
  if (dataDir !== undefined) {
    if (named('DATABASE_URL'))
      throw new UsageError(
        'both --data-dir and DATABASE_URL name a database; give one (unset DATABASE_URL to use the embedded PostgreSQL)',
      );
    return { config: loadConfig({ ...env, DATA_DIR: dataDir }) };
  }
  if (named('DATA_DIR') || named('DATABASE_URL')) return { config: loadConfig(env) };

  const services = await runningServices();
  const databases: RunningService[] = [];
  for (const service of services) if (!databases.some((seen) => sameDatabase(seen.database, service.database))) databases.push(service);
  if (databases.length === 0) {
    throw new UsageError(
      `no Afterimage service is running on this machine, so nothing says which database to write into. Start the service (npx afterimage start) and run this again, or name the database. ${HOW_TO_PICK}`,
    );
  }
  if (databases.length > 1) {
    throw new UsageError(
      [
        `${databases.length} Afterimage services run on this machine, on different databases:`,
        ...services.map((service) => `  ${describeService(service)}`),
        `Pick one: ${databases.map((service) => pickOption(service.database)).join(', or ')}.`,
      ].join('\n'),
    );
  }
  const [service] = databases as [RunningService];
  // The service's ARCHIVE_DIR too, so what is shown of it is the service's.
  const serviceEnv = { ...env, ...(service.archiveDir ? { ARCHIVE_DIR: service.archiveDir } : {}) };
  if (service.database.embedded) return { config: loadConfig({ ...serviceEnv, DATA_DIR: service.database.location }), service };
  if (service.database.location.includes('****')) {
    throw new UsageError(
      `the running service (${describeService(service)}) connects with a password, which it does not record; run this again with DATABASE_URL set to that database's URL, password included`,
    );
  }
  return { config: loadConfig({ ...serviceEnv, DATABASE_URL: service.database.location }), service };
}

/** Runs an operator command's work (withDatabase) on the database chooseDatabase picks. */
export async function withChosenDatabase<T>(
  dataDir: string | undefined,
  work: (db: Database, log: Logger, config: Config) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  const { config } = await chooseDatabase(dataDir);
  return withDatabase((db, log) => work(db, log, config), { ...options, config });
}
