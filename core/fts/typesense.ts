// Placeholder while the Typesense backend is written (helper); replaced by the real module.
import type { Config } from '../config.ts';
import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { SearchBackend } from './backend.ts';

export function createTypesenseBackend(_options: { config: Config; sql: Sql; log: Logger }): SearchBackend {
  throw new Error('the Typesense backend is not built yet');
}
export async function reindexAll(_options: { config: Config; sql: Sql; log: Logger }): Promise<void> {
  throw new Error('the Typesense backend is not built yet');
}
