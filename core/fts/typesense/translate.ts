import type { SearchParams } from 'typesense';
import { AppError } from '../../errors.ts';
import type { FtsFilters, FtsRequest, FtsSort } from '../backend.ts';
import type { FtsQuery, Term } from '../query.ts';
import { literal } from './client.ts';
import { adjacentPairs, type VideoDocument } from './documents.ts';

/**
 * The query language as Typesense search parameters. Every word must match as written: no typos, no
 * prefixes, no dropped words.
 */

/** Title weighs most, then tags, then the description. */
const QUERY_BY = 'title,tags,description';
const QUERY_BY_WEIGHTS = '3,2,1';
/** Ties: most viewed first, then video id; the id makes the order total, so pages never overlap. */
const TIE_BREAK = 'view_count:desc,video_id:asc';
/** Each direction sorts on its own field, whose sentinel puts missing values last (see documents.ts). */
const SORT_BY: Record<Exclude<FtsSort, 'relevance'>, string> = {
  'date-desc': `date_desc:desc,${TIE_BREAK}`,
  'date-asc': `date_asc:asc,${TIE_BREAK}`,
  'duration-desc': `duration_desc:desc,${TIE_BREAK}`,
  'duration-asc': `duration_asc:asc,${TIE_BREAK}`,
};
const MAX_PER_PAGE = 250;

function filterClauses(filters: FtsFilters): string[] {
  const clauses: string[] = [];
  if (filters.status) clauses.push(`status:=${filters.status}`);
  if (filters.hasVideo !== undefined) clauses.push(`has_video:=${filters.hasVideo}`);
  if (filters.hasSubtitles !== undefined) clauses.push(`has_subtitles:=${filters.hasSubtitles}`);
  if (filters.hasSummary !== undefined) clauses.push(`has_summary:=${filters.hasSummary}`);
  return clauses;
}

/** A phrase as a filter: all its pairs of adjacent tokens present (documents.ts). */
const hasPairs = (term: Term) =>
  adjacentPairs(term.tokens)
    .map((pair) => `pairs:=${literal(pair)}`)
    .join(' && ');
const isPair = (term: Term) => term.tokens.length === 2;
const isLong = (term: Term) => term.tokens.length > 2;
const quoted = (term: Term) => `"${term.tokens.join(' ')}"`;

/** A group of alternatives as a filter: any word on the tokens field, or any phrase on the pairs field. */
function anyOf(group: Term[]): string {
  const words = group.filter((term) => term.tokens.length === 1).map((term) => term.tokens[0]!);
  const phrases = group.filter((term) => term.tokens.length > 1).map((term) => `(${hasPairs(term)})`);
  return `(${[...(words.length ? [`tokens:[${words.map(literal).join(',')}]`] : []), ...phrases].join(' || ')})`;
}

/**
 * The query as q and filter_by. Typesense's q has no OR, and its phrases ("…" in q) match within one
 * field, where Postgres's run on across title, tags and description. So q holds the required words,
 * for matching and ranking; groups of alternatives filter on the tokens and pairs fields; a phrase of
 * two tokens, required or excluded, filters on its pair, which is exact. A longer phrase stays a phrase
 * in q (required: "…", excluded: -"…"), exact within a field, missing only phrases that cross a field
 * boundary; where q cannot hold it (among alternatives, or excluded from a query of only alternatives,
 * whose q is * and ranks by views), it is all its pairs present, which also holds when they are apart
 * ("a b x b c" for "a b c"): api/REFERENCE.md says so.
 */
function queryParameters(query: FtsQuery): { q: string; filters: string[] } {
  const required = query.groups.filter((group) => group.length === 1).map((group) => group[0]!);
  const filters = [...query.groups.filter((group) => group.length > 1).map(anyOf), ...required.filter(isPair).map(hasPairs)];
  const excludedWords = query.excluded.filter((term) => term.tokens.length === 1).map((term) => term.tokens[0]!);
  if (excludedWords.length) filters.push(`tokens:!=[${excludedWords.map(literal).join(',')}]`);
  const excludedPairs = query.excluded.filter(isPair).flatMap((term) => adjacentPairs(term.tokens));
  if (excludedPairs.length) filters.push(`pairs:!=[${excludedPairs.map(literal).join(',')}]`);
  const excludedLong = query.excluded.filter(isLong);
  if (required.length === 0) {
    for (const term of excludedLong)
      filters.push(
        `(${adjacentPairs(term.tokens)
          .map((pair) => `pairs:!=${literal(pair)}`)
          .join(' || ')})`,
      );
    return { q: '*', filters };
  }
  const words = required.map((term) => (isLong(term) ? quoted(term) : term.tokens.join(' ')));
  return { q: [...words, ...excludedLong.map((term) => `-${quoted(term)}`)].join(' '), filters };
}

/** num_typos 0, prefix off, no dropped words: a match means every word is there, as on Postgres. */
const EXACT = { num_typos: 0, typo_tokens_threshold: 0, drop_tokens_threshold: 0, prefix: false, split_join_tokens: 'off' } as const;

export function searchParameters(request: FtsRequest): SearchParams<VideoDocument> {
  const { limit, offset } = request;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PER_PAGE)
    throw new AppError('INVALID_INPUT', `limit must be 1 to ${MAX_PER_PAGE} for Typesense`);
  if (offset % limit !== 0) throw new AppError('INVALID_INPUT', 'offset must be a multiple of limit (whole pages)');
  const { q, filters } = queryParameters(request.query);
  const allFilters = [...filters, ...filterClauses(request.filters)];
  return {
    q,
    query_by: QUERY_BY,
    query_by_weights: QUERY_BY_WEIGHTS,
    ...EXACT,
    ...(allFilters.length ? { filter_by: allFilters.join(' && ') } : {}),
    sort_by: request.sort !== 'relevance' ? SORT_BY[request.sort] : q === '*' ? TIE_BREAK : `_text_match:desc,${TIE_BREAK}`,
    page: offset / limit + 1,
    per_page: limit,
    include_fields: 'id',
  };
}

/** The search a did-you-mean starts from: every word of the query, up to two typos each, one hit. */
export function suggestionParameters(query: FtsQuery, filters: FtsFilters): SearchParams<VideoDocument> {
  const words = [...new Set(query.groups.flat().flatMap((term) => term.tokens))];
  const clauses = filterClauses(filters);
  return {
    q: words.join(' '),
    query_by: QUERY_BY,
    query_by_weights: QUERY_BY_WEIGHTS,
    ...EXACT,
    num_typos: 2,
    typo_tokens_threshold: 1,
    ...(clauses.length ? { filter_by: clauses.join(' && ') } : {}),
    sort_by: `_text_match:desc,${TIE_BREAK}`,
    page: 1,
    per_page: 1,
    include_fields: 'id',
  };
}
