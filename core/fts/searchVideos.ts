import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { jsonText, type JsonText } from '../text/jsonText.ts';
import { loadVideoJson } from '../videos/loadVideos.ts';
import { videoObject, type VideoObject } from '../videos/videoObject.ts';
import { ftsSort, MAX_RESULT_WINDOW, type FtsFilters, type FtsSort, type SearchBackend } from './backend.ts';
import { highlighter, highlightHtml, type Highlight } from './highlight.ts';
import { parseQuery } from './query.ts';
import { searchSubtitles, subtitleHit, type FoundCue } from './subtitles.ts';

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

/** One video of a page: its JSON text as Postgres wrote it, and what the search adds to it (highlights in parts). */
interface Hit {
  json: string;
  highlight: { title: Highlight | null; description: Highlight | null };
  cues?: FoundCue[];
  cueMatches?: number;
}

/** A page of full-text results as found: each surface presents it (ftsResultsJson, presentResults). */
export interface FoundPage {
  hits: Hit[];
  rest: Omit<FtsResults, 'videos'>;
}

/**
 * A full-text search of the stored videos (or, in=subtitles, of their transcripts): checks the page
 * window, charges the caller (`charge`, which throws when the quota is used up), searches, highlights.
 * The page's videos stay JSON text: presentResults parses them, ftsResultsJson splices them.
 */
export async function searchVideos(
  deps: { sql: Sql; search: SearchBackend; timeoutMs: number },
  input: FtsSearch,
  charge: () => Promise<void>,
): Promise<FoundPage> {
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
    if (!inSubtitles) return { json: video.json, highlight };
    return { json: video.json, highlight, ...(found.cues?.get(video.videoId) ?? { cues: [], cueMatches: 0 }) };
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

/** What the search adds to a video, its highlights presented by `present`. */
function addedTo<H>(hit: Hit, present: (highlight: Highlight) => H) {
  const highlight = {
    title: hit.highlight.title && present(hit.highlight.title),
    description: hit.highlight.description && present(hit.highlight.description),
  };
  if (hit.cues === undefined) return { highlight };
  return { highlight, cues: hit.cues.map((cue) => ({ ...cue, text: present(cue.text) })), cueMatches: hit.cueMatches };
}

/**
 * A page of results as objects, each highlight presented by `present`: the API's HTML (highlightHtml) for the
 * search_videos tool, the parts as they are for the search page, which renders them itself.
 */
export function presentResults<H>({ hits, rest }: FoundPage, present: (highlight: Highlight) => H) {
  return { videos: hits.map((hit) => ({ ...(JSON.parse(hit.json) as VideoObject), ...addedTo(hit, present) })), ...rest };
}

/**
 * The page as GET /api/fts sends it, JSON text: each video's text as Postgres wrote it, with what the search
 * adds (highlights as HTML) written after its last field, so a page is never parsed nor serialised field by field.
 */
export function ftsResultsJson({ hits, rest }: FoundPage): JsonText<FtsResults> {
  let text = '{"videos":[';
  for (const [index, hit] of hits.entries())
    text += `${index ? ',' : ''}${hit.json.slice(0, -1)},${JSON.stringify(addedTo(hit, highlightHtml)).slice(1)}`;
  return jsonText(`${text}],${JSON.stringify(rest).slice(1)}`);
}
