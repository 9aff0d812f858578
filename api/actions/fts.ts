/**
 * Full-text search of the stored videos (titles, tags, descriptions, or what was said): GET /api/fts, the
 * search page and the search_videos tool perform it; each new query counts one ftsQueriesPerMinute, and
 * the caller's last query again (another page, order or filter of the same words) none.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ftsSort, MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { MAX_QUERY_LENGTH } from '../../core/fts/query.ts';
import { searchVideos, type FtsSearch } from '../../core/fts/searchVideos.ts';
import { quotaSubject } from '../http/guard.ts';
import { flag, wholeNumber } from '../http/input.ts';
import { defineAction, type ActionContext, type ApiDeps } from '../http/route.ts';

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

/** How long a caller's last query stays theirs: paging through it or changing its filters within it is free. */
const REPEAT_QUERY_MINUTES = 10;
/** Callers remembered per process (the oldest forgotten first): a forgotten one's next page is simply counted. */
const REMEMBERED_CALLERS = 10_000;

/**
 * Each caller's last full-text query (its words and where it looks: q and in), per API process. A
 * person paging through results or narrowing them asks the same question again, which ftsQueriesPerMinute
 * should not count as a new one; the request is still counted (requestsPerMinute or pageRequestsPerMinute).
 * Kept in memory: a repeat that reaches another process is counted, as any query is.
 */
const lastQueries = new WeakMap<ApiDeps, Map<string, { fingerprint: string; until: number }>>();

const fingerprintOf = (query: Pick<FtsSearch, 'q' | 'in'>) =>
  createHash('sha256')
    .update(`${query.in ?? 'videos'}\0${query.q.trim().replace(/\s+/g, ' ')}`)
    .digest('base64url');

function lastQueryOf({ deps, caller }: ActionContext) {
  let callers = lastQueries.get(deps);
  if (!callers) lastQueries.set(deps, (callers = new Map()));
  const subject = quotaSubject(caller, caller.tier.limits.ftsQueriesPerMinute);
  return {
    isRepeat: (fingerprint: string) => {
      const last = callers.get(subject);
      return last !== undefined && last.fingerprint === fingerprint && last.until > Date.now();
    },
    remember: (fingerprint: string) => {
      callers.delete(subject);
      callers.set(subject, { fingerprint, until: Date.now() + REPEAT_QUERY_MINUTES * 60_000 });
      if (callers.size > REMEMBERED_CALLERS) callers.delete(callers.keys().next().value!);
    },
  };
}

/** The page found, which each surface presents its own way (core/fts/searchVideos.ts: ftsResultsJson, presentResults). */
export const searchText = defineAction({
  what: 'full-text search',
  access: { scope: 'L1', feature: 'fullTextSearch', charges: ['ftsQueriesPerMinute'] },
  run(ctx, query: FtsSearch) {
    const { deps, charge } = ctx;
    const last = lastQueryOf(ctx);
    const fingerprint = fingerprintOf(query);
    return searchVideos({ sql: deps.sql, search: deps.search, timeoutMs: deps.config.FTS_TIMEOUT_MS }, query, async () => {
      await charge('ftsQueriesPerMinute', last.isRepeat(fingerprint) ? 0 : 1);
      last.remember(fingerprint);
    });
  },
});
