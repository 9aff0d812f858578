/** Asking the Wayback's CDX index: the query URL, and the answer read as rows (a blocked URL reads as none). */
import { fetchText, type FetchOptions } from '../http.ts';
import { DefiniteError, TransientError } from '../httpErrors.ts';
import type { Upstream } from '../upstream.ts';
import { CdxFormatError, parseCdx, type CdxPage } from './cdx.ts';

export interface CdxQuery {
  url: string;
  matchType?: 'exact' | 'prefix';
  output?: 'json' | 'text';
  fl: readonly string[];
  filter?: string[];
  collapse?: string[];
  limit?: number;
  showResumeKey?: boolean;
  resumeKey?: string;
}

export function buildCdxUrl(cdxUrl: string, query: CdxQuery): string {
  const params = new URLSearchParams();
  params.set('url', query.url);
  if (query.matchType && query.matchType !== 'exact') params.set('matchType', query.matchType);
  if (query.output === 'json') params.set('output', 'json');
  params.set('fl', query.fl.join(','));
  for (const filter of query.filter ?? []) params.append('filter', filter);
  for (const collapse of query.collapse ?? []) params.append('collapse', collapse);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.showResumeKey) params.set('showResumeKey', 'true');
  // The key goes back exactly as printed (still URL-encoded), so it is encoded once more here.
  if (query.resumeKey) params.set('resumeKey', query.resumeKey);
  return `${cdxUrl}?${params.toString()}`;
}

const BLOCKED = /Blocked Site Error|AdministrativeAccessControlException|RobotAccessControlException/i;

/**
 * One CDX request. 429, 5xx, timeouts and an HTML page instead of an index are transient; a 403
 * "Blocked Site Error" (the URL is excluded from the archive) is a definite empty answer.
 */
export async function queryCdx(
  upstream: Upstream,
  cdxUrl: string,
  query: CdxQuery,
  fetchOptions: FetchOptions = {},
): Promise<CdxPage & { blocked?: boolean }> {
  let body: string;
  try {
    ({ body } = await fetchText(upstream, buildCdxUrl(cdxUrl, query), {
      ...fetchOptions,
      isTransient: (status, text) => status === 200 && /^\s*<(?:!doctype|html)/i.test(text),
    }));
  } catch (error) {
    if (error instanceof DefiniteError && error.status === 403) return { rows: [], blocked: true };
    throw error;
  }
  if (BLOCKED.test(body.slice(0, 500))) return { rows: [], blocked: true };
  try {
    return parseCdx(body, query.output === 'json' ? undefined : query.fl);
  } catch (error) {
    if (error instanceof CdxFormatError) throw new TransientError(`${new URL(cdxUrl).host}: ${error.message}`);
    throw error;
  }
}
