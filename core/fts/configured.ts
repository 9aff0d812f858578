import type { Config } from '../config.ts';
import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { SearchBackend } from './backend.ts';
import { createPostgresBackend } from './postgres.ts';
import { createTypesenseBackend } from './typesense/backend.ts';

/** Typesense when TYPESENSE_URL is set, else Postgres full-text search on the service's own database. */
export function configuredSearchBackend(config: Config, sql: Sql, log: Logger): SearchBackend {
  if (config.TYPESENSE_URL) return createTypesenseBackend({ config, sql, log });
  return createPostgresBackend({ sql, timeoutMs: config.FTS_TIMEOUT_MS });
}
