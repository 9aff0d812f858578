import type { SearchResponse } from 'typesense';
import { ConfigError, type Config } from '../../config.ts';
import type { Sql } from '../../db/database.ts';
import type { Logger } from '../../log.ts';
import type { FtsFilters, FtsPage, FtsRequest, SearchBackend } from '../backend.ts';
import { formatQuery, type FtsQuery } from '../query.ts';
import { call, retryOverrides, typesenseTarget } from './client.ts';
import { correctedQuery } from './didYouMean.ts';
import type { VideoDocument } from './documents.ts';
import { searchParameters, suggestionParameters } from './translate.ts';

/**
 * Full-text search on Typesense. Documents (documents.ts) are kept in step by index_videos (sync.ts);
 * searches go through an alias named TYPESENSE_COLLECTION, which `afterimage reindex` (reindex.ts)
 * points at a freshly built collection; translate.ts turns a query into Typesense's parameters.
 */

export interface BackendOptions {
  config: Config;
  sql: Sql;
  log: Logger;
  retries?: number;
  minDelayMs?: number;
}

export function createTypesenseBackend(options: BackendOptions): SearchBackend {
  const target = typesenseTarget(options.config, options.log, { purpose: 'search', ...retryOverrides(options) });
  if (!target) throw new ConfigError(['TYPESENSE_URL: not set, so there is no Typesense to search']);
  const documents = () => target.client.collections<VideoDocument>(target.alias).documents();

  async function search(request: FtsRequest): Promise<FtsPage> {
    const parameters = searchParameters(request);
    const result: SearchResponse<VideoDocument> = await call(target!, 'search', () => documents().search(parameters));
    return { videoIds: (result.hits ?? []).map((hit) => hit.document.id), total: result.found, totalExact: true };
  }

  /** A corrected query, offered only when it finds something. */
  async function suggest(query: FtsQuery, filters: FtsFilters): Promise<string | null> {
    const result: SearchResponse<VideoDocument> = await call(target!, 'look for a suggestion', () =>
      documents().search(suggestionParameters(query, filters)),
    );
    const hit = result.hits?.[0];
    if (!hit) return null;
    const corrected = correctedQuery(query, hit);
    if (!corrected) return null;
    const found = await search({ query: corrected, filters, sort: 'relevance', offset: 0, limit: 1 });
    return found.total > 0 ? formatQuery(corrected) : null;
  }

  return { name: 'typesense', search, suggest, close: async () => {} };
}
