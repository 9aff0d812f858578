import { ftsResults, ftsResultsJson } from '../../core/fts/searchVideos.ts';
import { MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { perform } from '../http/route.ts';
import { ftsQuery, searchText } from '../actions/fts.ts';
import { defineRoute } from '../http/route.ts';

export const ftsRoute = defineRoute({
  method: 'GET',
  path: '/api/fts',
  tag: 'Full-text search',
  summary: 'Search the titles, tags and descriptions of every stored video (or, with in=subtitles, what was said in them)',
  description: `q: every word must match; "an exact phrase"; -word or -"a phrase" excludes; a OR b matches either. Case and accents never matter; no stemming, so every language is searched alike; Chinese, Japanese and Korean text is matched character by character as phrases. status=deleted also finds re-uploaded videos; live leaves out videos not yet verified. Ties sort by view count, then video id; videos without a date or duration sort last either way. Results past position ${MAX_RESULT_WINDOW} are not served (page × pageSize ≤ ${MAX_RESULT_WINDOW}). When nothing matches, suggestion may hold a corrected query. in=subtitles searches the videos' transcripts and answers per video with up to 3 matching cues, their times and a link to that second. Counts one ftsQueriesPerMinute.`,
  auth: 'key',
  ...searchText.access,
  query: ftsQuery,
  response: ftsResults,
  errors: ['SERVICE_UNAVAILABLE'],
  async handler(ctx) {
    return ftsResultsJson(await perform(searchText, ctx, ctx.query));
  },
});
