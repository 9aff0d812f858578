import type { Config } from '../config.ts';
import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { SearchBackend } from './backend.ts';
import type { TypesenseTarget } from './typesense/client.ts';
import { createPostgresBackend } from './postgres.ts';

/**
 * Typesense when TYPESENSE_URL is set, else Postgres full-text search on the service's own database.
 * The Typesense client (and its dependencies) is loaded only when configured, here and below.
 */
export async function configuredSearchBackend(config: Config, sql: Sql, log: Logger): Promise<SearchBackend> {
  if (!config.TYPESENSE_URL) return createPostgresBackend({ sql, timeoutMs: config.FTS_TIMEOUT_MS });
  const { createTypesenseBackend } = await import('./typesense/backend.ts');
  return createTypesenseBackend({ config, sql, log });
}

/** Where index_videos writes: the configured Typesense, with an indexer's patient retries; none without TYPESENSE_URL. */
export async function configuredIndexingTarget(config: Config, log: Logger): Promise<TypesenseTarget | undefined> {
  if (!config.TYPESENSE_URL) return undefined;
  const { typesenseTarget } = await import('./typesense/client.ts');
  return typesenseTarget(config, log, { purpose: 'indexing' });
}
