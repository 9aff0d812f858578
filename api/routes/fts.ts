import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { ftsSort, MAX_RESULT_WINDOW, type FtsFilters, type FtsPage } from '../../core/fts/backend.ts';
import { highlighter } from '../../core/fts/highlight.ts';
import { MAX_QUERY_LENGTH, parseQuery } from '../../core/fts/query.ts';
import { searchSubtitles, subtitleHit } from '../../core/fts/subtitles.ts';
import { VIDEO_JSON, videoObject, type VideoObject } from '../../core/videos/videoObject.ts';
import type { Sql } from '../../core/db/database.ts';
import { chargeQuota } from '../http/quota.ts';
import { flag, wholeNumber } from '../http/queryParams.ts';
import { defineRoute } from '../http/route.ts';


const highlight = z.object({
  title: z.string().nullable(),
  description: z.string().nullable().describe('about 200 characters of the description around the first match'),
}).describe('HTML-escaped text, each word searched for wrapped in <mark>…</mark>');

const videoHit = videoObject.extend({ highlight });

export const ftsRoute = defineRoute({
  method: 'GET',
  path: '/api/fts',
  tag: 'Full-text search',
  summary: 'Search the titles, tags and descriptions of every stored video (or, with in=subtitles, what was said in them)',
  description: `q: every word must match; "an exact phrase"; -word or -"a phrase" excludes; a OR b matches either. Case and accents never matter; no stemming, so every language is searched alike; Chinese, Japanese and Korean text is matched character by character as phrases. status=deleted also finds re-uploaded videos; live leaves out videos not yet verified. Ties sort by view count, then video id; videos without a date or duration sort last either way. Results past position ${MAX_RESULT_WINDOW} are not served (page × pageSize ≤ ${MAX_RESULT_WINDOW}). When nothing matches, suggestion may hold a corrected query. in=subtitles searches the videos' transcripts and answers per video with up to 3 matching cues, their times and a link to that second. Counts one ftsQueriesPerMinute.`,
  auth: 'key',
  scope: 'L1',
  feature: 'fullTextSearch',
  query: z.strictObject({
    q: z.string({ message: 'required: the words to search for' }).max(MAX_QUERY_LENGTH, { message: `at most ${MAX_QUERY_LENGTH} characters` }),
    page: wholeNumber('page', 1, MAX_RESULT_WINDOW).default(1),
    pageSize: wholeNumber('pageSize', 1, 100).default(50),
    status: z.enum(['live', 'deleted'], { message: 'expected live or deleted' }).optional(),
    hasVideo: flag.optional(),
    hasSubtitles: flag.optional(),
    hasSummary: flag.optional(),
    sort: ftsSort.default('relevance'),
    in: z.enum(['videos', 'subtitles'], { message: 'expected videos or subtitles' }).default('videos'),
  }),
  response: z.object({
    videos: z.array(videoHit.extend({
      cues: z.array(subtitleHit).optional().describe('in=subtitles: the first matching cues (at most 3)'),
      cueMatches: z.number().int().optional().describe('in=subtitles: how many cues match in all'),
    })),
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
  }),
  errors: ['SERVICE_UNAVAILABLE'],
  async handler({ query, caller, deps, res }) {
    const started = performance.now();
    const parsed = parseQuery(query.q);
    const offset = (query.page - 1) * query.pageSize;
    if (offset + query.pageSize > MAX_RESULT_WINDOW) {
      throw new AppError('INVALID_INPUT', `page: results past the first ${MAX_RESULT_WINDOW} are not served (page × pageSize ≤ ${MAX_RESULT_WINDOW}); narrow the query with more words or filters, or change the sort`);
    }
    await chargeQuota(deps.counterSql ?? deps.sql, caller, 'ftsQueriesPerMinute', res);
    const filters: FtsFilters = {
      ...(query.status ? { status: query.status } : {}),
      ...(query.hasVideo !== undefined ? { hasVideo: query.hasVideo } : {}),
      ...(query.hasSubtitles !== undefined ? { hasSubtitles: query.hasSubtitles } : {}),
      ...(query.hasSummary !== undefined ? { hasSummary: query.hasSummary } : {}),
    };
    const request = { query: parsed, filters, sort: query.sort, offset, limit: query.pageSize };
    const inSubtitles = query.in === 'subtitles';
    const found = inSubtitles ? await searchSubtitles(deps.sql, request, deps.config.FTS_TIMEOUT_MS) : await deps.search.search(request);
    const mark = highlighter(parsed);
    const videos = (await loadVideos(deps.sql, found.videoIds)).map((video) => ({
      ...video,
      highlight: { title: mark(video.title), description: mark(video.description, 200) },
      ...(inSubtitles ? subtitleMatches(found, video.videoId) : {}),
    }));
    const suggestion = found.total === 0 && !inSubtitles ? await deps.search.suggest(parsed, filters) : null;
    return {
      videos,
      page: query.page,
      pageSize: query.pageSize,
      total: found.total,
      totalExact: found.totalExact,
      totalPages: Math.ceil(Math.min(found.total, MAX_RESULT_WINDOW) / query.pageSize),
      sort: query.sort,
      in: query.in,
      suggestion,
      backend: inSubtitles ? 'postgres' : deps.search.name,
      tookMs: Math.round((performance.now() - started) * 10) / 10,
    };
  },
});

const subtitleMatches = (found: FtsPage & { cues?: Map<string, { cues: z.infer<typeof subtitleHit>[]; cueMatches: number }> }, videoId: string) =>
  found.cues?.get(videoId) ?? { cues: [], cueMatches: 0 };

/** The stored videos of the given ids, in the order given. */
async function loadVideos(sql: Sql, videoIds: string[]): Promise<VideoObject[]> {
  if (videoIds.length === 0) return [];
  const rows = await sql<{ video: VideoObject }[]>`
    select ${sql.unsafe(VIDEO_JSON)} as video
    from unnest(${videoIds}::text[]) with ordinality as wanted (video_id, position)
    join videos v on v.video_id = wanted.video_id join channels c on c.channel_id = v.channel_id
    order by wanted.position`;
  return rows.map((row) => row.video);
}
