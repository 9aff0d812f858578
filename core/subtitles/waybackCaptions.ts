/**
 * Archived caption captures: timedtext answers the Wayback Machine captured
 * (youtube.com/api/timedtext?…&v=ID&lang=…, and the older video.google.com/timedtext), found with
 * the CDX index (a prefix query filtered on the video id: the index sorts query parameters, so
 * there is no prefix of one video's captures) and read with the `id_` flag (the original bytes).
 *
 * Per (language, kind) only the newest capture is read. The kind comes from the captured URL:
 * `tlang=` is a translation (its language is tlang's), `kind=asr` is speech recognition, anything
 * else a manual track. Track lists (`type=list`) and answers without a language are skipped.
 */
import { fetchText, type FetchOptions } from '../sources/http.ts';
import { withLastAnswer, type KeptAnswer } from '../sources/keptAnswer.ts';
import type { WaybackCapture } from '../sources/types.ts';
import { upstreamFor } from '../sources/upstream.ts';
import type { CdxRow } from '../sources/wayback/cdx.ts';
import { queryCdx } from '../sources/wayback/cdxQuery.ts';
import { escapeRegExp } from '../text/escapeRegExp.ts';
import { parseTrackName } from '../youtube/trackName.ts';
import { trackFailure, type TrackProblem } from './trackFailure.ts';

export interface WaybackCaptionsOptions {
  cdxUrl?: string;
  /** Where captures are read: `{captureBaseUrl}/{timestamp}id_/{original}`. */
  captureBaseUrl?: string;
  /** What origin URLs point to (the public Wayback), whatever captureBaseUrl is. */
  publicCaptureBaseUrl?: string;
  fetchOptions?: Omit<FetchOptions, 'isTransient' | 'signal'>;
  /** Captures read per video at most (default 12). */
  maxTracks?: number;
  /** CDX rows asked for per URL prefix (default 500). */
  cdxLimit?: number;
}

export interface ArchivedCaption {
  language: string;
  kind: 'manual' | 'auto' | 'translated';
  text: string;
  bytes: number;
  /** fmt= of the captured URL, when it had one. */
  format?: string;
  /** The public capture URL. */
  url: string;
  /** The capture as the Wayback answered it (on its public origin), kept as the evidence of a version it makes. */
  answer?: KeptAnswer;
  wayback: WaybackCapture['wayback'];
}

const PREFIXES = ['youtube.com/api/timedtext', 'video.google.com/timedtext'];

/** Language (a BCP 47 tag), kind and format a captured timedtext URL asks for; undefined for lists, other videos and no language. */
export function describeTimedtextUrl(
  original: string,
  videoId: string,
): { language: string; kind: ArchivedCaption['kind']; format?: string } | undefined {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(original) ? original : `http://${original}`);
  } catch {
    return undefined;
  }
  const params = url.searchParams;
  if (params.get('v') !== videoId || params.get('type') === 'list') return undefined;
  const lang = params.get('lang');
  if (!lang) return undefined;
  const tlang = params.get('tlang');
  const kind = tlang ? 'translated' : params.get('kind') === 'asr' ? 'auto' : 'manual';
  const format = params.get('fmt') ?? undefined;
  const language = parseTrackName(tlang || lang, { languageCode: tlang || lang })?.language;
  if (!language) return undefined;
  return { language, kind, ...(format ? { format } : {}) };
}

export function createWaybackCaptionsSource(options: WaybackCaptionsOptions = {}) {
  const cdxUrl = options.cdxUrl ?? 'https://web.archive.org/cdx/search/cdx';
  const captureBase = (options.captureBaseUrl ?? 'https://web.archive.org/web').replace(/\/+$/, '');
  const publicBase = (options.publicCaptureBaseUrl ?? 'https://web.archive.org/web').replace(/\/+$/, '');
  const publicOrigin = new URL(publicBase).origin;
  const maxTracks = options.maxTracks ?? 12;
  const cdxLimit = options.cdxLimit ?? 500;
  const upstream = upstreamFor('wayback', [cdxUrl, captureBase]);
  const base: FetchOptions = { timeoutMs: 20_000, retries: 2, minDelayMs: 1_000, maxDelayMs: 8_000, ...options.fetchOptions };
  const withSignal = (signal?: AbortSignal): FetchOptions => (signal ? { ...base, signal } : base);

  /** The newest capture of each (language, kind) of the video. */
  async function listCaptures(
    videoId: string,
    signal?: AbortSignal,
  ): Promise<Array<{ row: CdxRow; language: string; kind: ArchivedCaption['kind']; format?: string }>> {
    const newest = new Map<string, { row: CdxRow; language: string; kind: ArchivedCaption['kind']; format?: string }>();
    for (const prefix of PREFIXES) {
      const page = await queryCdx(
        upstream,
        cdxUrl,
        {
          url: prefix,
          matchType: 'prefix',
          output: 'json',
          fl: ['timestamp', 'original', 'statuscode', 'mimetype', 'digest'],
          filter: ['statuscode:200', `original:.*[?&]v=${escapeRegExp(videoId)}(?:&.*)?`],
          limit: cdxLimit,
        },
        withSignal(signal),
      );
      for (const row of page.rows) {
        const described = describeTimedtextUrl(row.original, videoId);
        if (!described) continue;
        const key = `${described.language}\0${described.kind}`;
        const current = newest.get(key);
        if (!current || row.timestamp > current.row.timestamp) newest.set(key, { row, ...described });
      }
    }
    return [...newest.values()]
      .sort((a, b) => (a.language < b.language ? -1 : a.language > b.language ? 1 : a.kind < b.kind ? -1 : 1))
      .slice(0, maxTracks);
  }

  /** The captures' texts; captures not replayable are left out, captures refused or unreachable are problems. */
  async function fetchCaptions(videoId: string, signal?: AbortSignal): Promise<{ captions: ArchivedCaption[]; problems: TrackProblem[] }> {
    const captures = await listCaptures(videoId, signal);
    const found: ArchivedCaption[] = [];
    const problems: TrackProblem[] = [];
    for (const capture of captures) {
      let body: string;
      let answer: KeptAnswer | undefined;
      try {
        // An archived answer is content, whatever it says: never a refusal of ours.
        ({
          result: { body },
          answer,
        } = await withLastAnswer(publicOrigin, () =>
          fetchText(upstream, `${captureBase}/${capture.row.timestamp}id_/${capture.row.original}`, {
            ...withSignal(signal),
            isTransient: () => false,
          }),
        ));
      } catch (error) {
        const problem = trackFailure(error, `${capture.language} (${capture.kind}) captured ${capture.row.timestamp}`, signal);
        if (problem) problems.push(problem);
        continue;
      }
      if (!body.trim()) continue;
      found.push({
        language: capture.language,
        kind: capture.kind,
        text: body,
        bytes: Buffer.byteLength(body),
        ...(capture.format ? { format: capture.format } : {}),
        url: `${publicBase}/${capture.row.timestamp}/${capture.row.original}`,
        ...(answer ? { answer } : {}),
        wayback: { timestamp: capture.row.timestamp, digest: capture.row.digest ?? null },
      });
    }
    return { captions: found, problems };
  }

  return { name: 'wayback' as const, listCaptures, fetchCaptions };
}
