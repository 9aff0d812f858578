import { z } from 'zod';
import { ftsSort, MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { MAX_QUERY_LENGTH } from '../../core/fts/query.ts';
import { ftsResults, searchVideos, searchVideosJson, type FtsSearch } from '../../core/fts/searchVideos.ts';
import { flag, wholeNumber } from '../http/queryParams.ts';
import { defineRoute, type ApiDeps } from '../http/route.ts';

/** GET /api/fts's query; the search page reads the same fields. */
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

const searchDeps = (deps: ApiDeps) => ({ sql: deps.sql, search: deps.search, timeoutMs: deps.config.FTS_TIMEOUT_MS });

/** The search behind the search page (GET /api/fts answers the same as JSON text); `charge` counts one ftsQueriesPerMinute. */
export const fullTextSearch = (deps: ApiDeps, query: FtsSearch, charge: () => Promise<void>) =>
  searchVideos(searchDeps(deps), query, charge);

export const ftsRoute = defineRoute({
  method: 'GET',
  path: '/api/fts',
  tag: 'Full-text search',
  summary: 'Search the titles, tags and descriptions of every stored video (or, with in=subtitles, what was said in them)',
  description: `q: every word must match; "an exact phrase"; -word or -"a phrase" excludes; a OR b matches either. Case and accents never matter; no stemming, so every language is searched alike; Chinese, Japanese and Korean text is matched character by character as phrases. status=deleted also finds re-uploaded videos; live leaves out videos not yet verified. Ties sort by view count, then video id; videos without a date or duration sort last either way. Results past position ${MAX_RESULT_WINDOW} are not served (page × pageSize ≤ ${MAX_RESULT_WINDOW}). When nothing matches, suggestion may hold a corrected query. in=subtitles searches the videos' transcripts and answers per video with up to 3 matching cues, their times and a link to that second. Counts one ftsQueriesPerMinute.`,
  auth: 'key',
  scope: 'L1',
  feature: 'fullTextSearch',
  query: ftsQuery,
  response: ftsResults,
  errors: ['SERVICE_UNAVAILABLE'],
  charges: ['ftsQueriesPerMinute'],
  async handler({ query, charge, deps }) {
    return searchVideosJson(searchDeps(deps), query, async () => void (await charge('ftsQueriesPerMinute')));
  },
});
