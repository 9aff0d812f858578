import { z } from 'zod';
import type { VideoJson } from '../videos/loadVideos.ts';
import type { FtsQuery } from './query.ts';

/** What both full-text backends (Postgres, Typesense) answer to, and how the API calls them. */

export const FTS_SORTS = ['relevance', 'date-desc', 'date-asc', 'duration-desc', 'duration-asc'] as const;
export const ftsSort = z.enum(FTS_SORTS, { message: `expected one of ${FTS_SORTS.join(', ')}` });
export type FtsSort = z.infer<typeof ftsSort>;

/** status=deleted also finds re-uploaded videos (gone from their first address); live excludes unverified ones. */
export interface FtsFilters {
  status?: 'live' | 'deleted';
  hasVideo?: boolean;
  hasSubtitles?: boolean;
  hasSummary?: boolean;
}

/** Results past this position are not served: deeper pages cost every backend more than they are worth. */
export const MAX_RESULT_WINDOW = 10_000;

export interface FtsRequest {
  query: FtsQuery;
  filters: FtsFilters;
  sort: FtsSort;
  /** Zero-based position of the first hit wanted; offset + limit ≤ MAX_RESULT_WINDOW. */
  offset: number;
  limit: number;
  /** The page's videos are wanted too: a backend that reads them in its own statement answers them in `videos`. */
  withVideos?: boolean;
}

export interface FtsPage {
  /** The hits of the requested page, best first (or in the requested order). */
  videoIds: string[];
  /** How many videos match: exact when totalExact, else the backend's estimate. */
  total: number;
  totalExact: boolean;
  /** With `withVideos`, when the backend read them with the page: the stored videos of videoIds, in order. */
  videos?: VideoJson[];
}

/**
 * A search backend. Sorting ties are broken by view count (most viewed first), then video id, so pages never
 * overlap or skip; videos without a date or duration sort last in both directions.
 */
export interface SearchBackend {
  readonly name: 'postgres' | 'typesense';
  search(request: FtsRequest): Promise<FtsPage>;
  /** For a query that found nothing: the closest query, built from words the index has, that finds something; else null. */
  suggest(query: FtsQuery, filters: FtsFilters): Promise<string | null>;
  close(): Promise<void>;
}
