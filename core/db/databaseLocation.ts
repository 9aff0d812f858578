import { describeConfig, type Config } from '../config.ts';

/** Which database a process of this configuration uses, as operators are shown it (never a password). */
export interface DatabaseLocation {
  embedded: boolean;
  /** The embedded cluster's DATA_DIR (absolute), or DATABASE_URL with its password masked. */
  location: string;
}

export function databaseLocation(config: Config): DatabaseLocation {
  return config.DATABASE_URL
    ? { embedded: false, location: String(describeConfig(config).DATABASE_URL) }
    : { embedded: true, location: config.dataDir };
}

export const sameDatabase = (a: DatabaseLocation, b: DatabaseLocation) => a.embedded === b.embedded && a.location === b.location;

export const describeDatabaseLocation = (database: DatabaseLocation) =>
  database.embedded ? `the embedded PostgreSQL in ${database.location} (DATA_DIR)` : `${database.location} (DATABASE_URL)`;
