import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { loadVideos } from '../videos/loadVideos.ts';
import { videoObject } from '../videos/videoObject.ts';
import { ftsSort, MAX_RESULT_WINDOW, type FtsFilters, type FtsSort, type SearchBackend } from './backend.ts';
import { highlighter } from './highlight.ts';
import { parseQuery } from './query.ts';
import { searchSubtitles, subtitleHit } from './subtitles.ts';

const highlight = z
  .object({
    title: z.string().nullable(),
    description: z.string().nullable().describe('about 200 characters of the description around the first match'),
  })
  .describe('HTML-escaped text, each word searched for wrapped in <mark>…</mark>');

/** One page of full-text results: GET /api/fts's answer, and the search_videos tool's. */
export const ftsResults = z.object({
  videos: z.array(
    videoObject.extend({
      highlight,
      cues: z.array(subtitleHit).optional().describe('in=subtitles: the first matching cues (at most 3)'),
      cueMatches: z.number().int().optional().describe('in=subtitles: how many cues match in all'),
    }),
  ),
  page: z.number().int(),
  pageSize: z.number().int(),
  total: z.number().int(),
  totalExact: z.boolean().describe('false: total is an estimate (a query matching more than 10,000 videos is not counted one by one)'),
  totalPages: z.number().int().describe(`pages that can be fetched (at most ${MAX_RESULT_WINDOW} results)`),
  sort: ftsSort,
  in: z.enum(['videos', 'subtitles']),
  suggestion: z.string().nullable().describe('when nothing matched: a query with corrected words that finds something'),
  backend: z.enum(['postgres', 'typesense']).describe('which search engine answered (subtitle search is always Postgres)'),
  tookMs: z.number(),
});
type FtsResults = z.infer<typeof ftsResults>;

export interface FtsSearch extends FtsFilters {
  q: string;
  page: number;
  pageSize: number;
  sort: FtsSort;
  in: 'videos' | 'subtitles';
}

/**
 * A full-text search of the stored videos (or, in=subtitles, of their transcripts): checks the page
 * window, charges the caller (`charge`, which throws when the quota is used up), searches, highlights.
 */
export async function searchVideos(
  deps: { sql: Sql; search: SearchBackend; timeoutMs: number },
  input: FtsSearch,
  charge: () => Promise<void>,
): Promise<FtsResults> {
  const started = performance.now();
  const parsed = parseQuery(input.q);
  const offset = (input.page - 1) * input.pageSize;
  if (offset + input.pageSize > MAX_RESULT_WINDOW) {
    throw new AppError(
      'INVALID_INPUT',
      `page: results past the first ${MAX_RESULT_WINDOW} are not served (page × pageSize ≤ ${MAX_RESULT_WINDOW}); narrow the query with more words or filters, or change the sort`,
    );
  }
  await charge();
  const filters: FtsFilters = {
    ...(input.status ? { status: input.status } : {}),
    ...(input.hasVideo !== undefined ? { hasVideo: input.hasVideo } : {}),
    ...(input.hasSubtitles !== undefined ? { hasSubtitles: input.hasSubtitles } : {}),
    ...(input.hasSummary !== undefined ? { hasSummary: input.hasSummary } : {}),
  };
  const request = { query: parsed, filters, sort: input.sort, offset, limit: input.pageSize };
  const inSubtitles = input.in === 'subtitles';
  const found = inSubtitles
    ? await searchSubtitles(deps.sql, request, deps.timeoutMs)
    : { ...(await deps.search.search(request)), cues: undefined };
  const mark = highlighter(parsed);
  const videos = (await loadVideos(deps.sql, found.videoIds)).map((video) => ({
    ...video,
    highlight: { title: mark(video.title), description: mark(video.description, 200) },
    ...(inSubtitles ? (found.cues?.get(video.videoId) ?? { cues: [], cueMatches: 0 }) : {}),
  }));
  const suggestion = found.total === 0 && !inSubtitles ? await deps.search.suggest(parsed, filters) : null;
  return {
    videos,
    page: input.page,
    pageSize: input.pageSize,
    total: found.total,
    totalExact: found.totalExact,
    totalPages: Math.ceil(Math.min(found.total, MAX_RESULT_WINDOW) / input.pageSize),
    sort: input.sort,
    in: input.in,
    suggestion,
    backend: inSubtitles ? 'postgres' : deps.search.name,
    tookMs: Math.round((performance.now() - started) * 10) / 10,
  };
}
