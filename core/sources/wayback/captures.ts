/** The Wayback Machine as the source reads it: CDX queries, capture bodies, and the public URL of a capture. */
import { fetchText, type FetchOptions } from '../http.ts';
import { DefiniteError } from '../httpErrors.ts';
import { upstreamFor } from '../upstream.ts';
import type { CdxRow } from './cdx.ts';
import { queryCdx, type CdxQuery } from './cdxQuery.ts';

const CAPTURE_FL = ['timestamp', 'original', 'statuscode', 'mimetype', 'digest'] as const;
/** Rows asked for per video or channel page (one per month: enough to bisect between notices and metadata). */
const TIMELINE_LIMIT = 400;

export interface WaybackEndpoints {
  cdxUrl: string;
  /** Where captures are read, without a trailing slash. */
  captureBase: string;
  /** What archiveUrl/evidenceUrl point to, without a trailing slash. */
  publicBase: string;
  fetchOptions: FetchOptions;
}

export interface WaybackCaptures {
  publicBase: string;
  cdx(query: CdxQuery, signal?: AbortSignal): ReturnType<typeof queryCdx>;
  /** A capture's original bytes (`id_`), or the replay (which follows archived redirects); undefined when not replayable. */
  readCapture(row: CdxRow, signal: AbortSignal | undefined, replay?: boolean): Promise<string | undefined>;
  /** Captures of one exact URL, ascending, one a month, 200s only (or redirects too, for youtu.be). */
  timeline(url: string, signal: AbortSignal | undefined, options?: { anyStatus?: boolean }): Promise<CdxRow[]>;
  publicUrl(row: CdxRow): string;
}

export function waybackCaptures({ cdxUrl, captureBase, publicBase, fetchOptions }: WaybackEndpoints): WaybackCaptures {
  const upstream = upstreamFor('wayback', [cdxUrl, captureBase]);
  const withSignal = (signal?: AbortSignal): FetchOptions => (signal ? { ...fetchOptions, signal } : fetchOptions);
  const cdx = (query: CdxQuery, signal?: AbortSignal) => queryCdx(upstream, cdxUrl, query, withSignal(signal));

  async function readCapture(row: CdxRow, signal: AbortSignal | undefined, replay = false): Promise<string | undefined> {
    const url = `${captureBase}/${row.timestamp}${replay ? '' : 'id_'}/${row.original}`;
    try {
      // Archived pages may hold a bot check or a "try again later" text: that is content, not our refusal.
      const { body } = await fetchText(upstream, url, { ...withSignal(signal), isTransient: () => false });
      return body;
    } catch (error) {
      if (error instanceof DefiniteError) return undefined; // not replayable: step over it
      throw error;
    }
  }

  async function timeline(url: string, signal: AbortSignal | undefined, { anyStatus = false } = {}): Promise<CdxRow[]> {
    const page = await cdx(
      {
        url,
        output: 'json',
        fl: CAPTURE_FL,
        filter: anyStatus ? ['!statuscode:[45]..'] : ['statuscode:200'],
        collapse: ['timestamp:6'],
        limit: TIMELINE_LIMIT,
      },
      signal,
    );
    return page.rows.filter((row) => !row.mimetype || /html|revisit/i.test(row.mimetype));
  }

  return { publicBase, cdx, readCapture, timeline, publicUrl: (row) => `${publicBase}/${row.timestamp}/${row.original}` };
}
