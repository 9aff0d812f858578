/**
 * Full-text search of the stored videos (titles, tags, descriptions, or what was said): GET /api/fts, the
 * search page and the search_videos tool perform it; each counts one ftsQueriesPerMinute.
 */
import { z } from 'zod';
import { ftsSort, MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { MAX_QUERY_LENGTH } from '../../core/fts/query.ts';
import { searchVideos, searchVideosJson, type FtsSearch } from '../../core/fts/searchVideos.ts';
import { flag, wholeNumber } from '../http/input.ts';
import { defineAction, type ActionContext } from '../http/route.ts';

/** The search as a query string gives it: GET /api/fts and the search page. */
export const ftsQuery = z.strictObject({
  q: z
    .string({ message: 'required: the words to search for' })
    .regex(/\S/, { message: 'must not be empty; give one or more words' })
    .max(MAX_QUERY_LENGTH, { message: `at most ${MAX_QUERY_LENGTH} characters` }),
  page: wholeNumber('page', 1, MAX_RESULT_WINDOW, 1),
  pageSize: wholeNumber('pageSize', 1, 100, 50),
  status: z.enum(['live', 'deleted'], { message: 'expected live or deleted' }).optional(),
  hasVideo: flag.optional(),
  hasSubtitles: flag.optional(),
  hasSummary: flag.optional(),
  sort: ftsSort.default('relevance'),
  in: z.enum(['videos', 'subtitles'], { message: 'expected videos or subtitles' }).default('videos'),
});

const access = { scope: 'L1', feature: 'fullTextSearch', charges: ['ftsQueriesPerMinute'] } as const;

const searching = ({ deps, charge }: ActionContext) =>
  [
    { sql: deps.sql, search: deps.search, timeoutMs: deps.config.FTS_TIMEOUT_MS },
    async () => void (await charge('ftsQueriesPerMinute')),
  ] as const;

export const searchText = defineAction({
  what: 'full-text search',
  access,
  run(ctx, query: FtsSearch) {
    const [deps, charge] = searching(ctx);
    return searchVideos(deps, query, charge);
  },
});

/** The same search answered as JSON text, which the API sends as it is (no objects built for a page of results). */
export const searchTextJson = defineAction({
  what: 'full-text search',
  access,
  run(ctx, query: FtsSearch) {
    const [deps, charge] = searching(ctx);
    return searchVideosJson(deps, query, charge);
  },
});
