import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { jsonText, type JsonText } from '../text/jsonText.ts';
import { loadVideoJson } from '../videos/loadVideos.ts';
import { videoObject, type VideoObject } from '../videos/videoObject.ts';
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
type FtsVideo = FtsResults['videos'][number];

export interface FtsSearch extends FtsFilters {
  q: string;
  page: number;
  pageSize: number;
  sort: FtsSort;
  in: 'videos' | 'subtitles';
}

/** One video of a page: its JSON text as Postgres wrote it, and what the search adds to it. */
interface Hit {
  json: string;
  added: Pick<FtsVideo, 'highlight' | 'cues' | 'cueMatches'>;
}

/**
 * A full-text search of the stored videos (or, in=subtitles, of their transcripts): checks the page
 * window, charges the caller (`charge`, which throws when the quota is used up), searches, highlights.
 * The page's videos stay JSON text: searchVideos parses them, searchVideosJson splices them.
 */
async function findPage(
  deps: { sql: Sql; search: SearchBackend; timeoutMs: number },
  input: FtsSearch,
  charge: () => Promise<void>,
): Promise<{ hits: Hit[]; rest: Omit<FtsResults, 'videos'> }> {
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
  const request = { query: parsed, filters, sort: input.sort, offset, limit: input.pageSize, withVideos: true };
  const inSubtitles = input.in === 'subtitles';
  const found = inSubtitles
    ? await searchSubtitles(deps.sql, request, deps.timeoutMs)
    : { ...(await deps.search.search(request)), cues: undefined };
  const mark = highlighter(parsed);
  const hits = (found.videos ?? (await loadVideoJson(deps.sql, found.videoIds))).map((video): Hit => {
    const highlight = { title: mark(video.title), description: mark(video.description, 200) };
    if (!inSubtitles) return { json: video.json, added: { highlight } };
    return { json: video.json, added: { highlight, ...(found.cues?.get(video.videoId) ?? { cues: [], cueMatches: 0 }) } };
  });
  const suggestion = found.total === 0 && !inSubtitles ? await deps.search.suggest(parsed, filters) : null;
  return {
    hits,
    rest: {
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
    },
  };
}

/** A page of full-text results as objects (the search page, the search_videos tool). */
export async function searchVideos(...args: Parameters<typeof findPage>): Promise<FtsResults> {
  const { hits, rest } = await findPage(...args);
  return { videos: hits.map((hit) => ({ ...(JSON.parse(hit.json) as VideoObject), ...hit.added })), ...rest };
}

/**
 * The same page as JSON text (GET /api/fts): each video's text as Postgres wrote it, with what the search
 * adds written after its last field, so a page is never parsed nor serialised field by field.
 */
export async function searchVideosJson(...args: Parameters<typeof findPage>): Promise<JsonText<FtsResults>> {
  const { hits, rest } = await findPage(...args);
  let text = '{"videos":[';
  for (const [index, hit] of hits.entries()) text += `${index ? ',' : ''}${hit.json.slice(0, -1)},${JSON.stringify(hit.added).slice(1)}`;
  return jsonText(`${text}],${JSON.stringify(rest).slice(1)}`);
}
