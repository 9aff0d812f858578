/**
 * The Wayback Machine as a video source.
 *
 * resolveChannel (./resolveChannel.ts): the newest usable 200 capture of the channel's page, found
 * through the CDX index and read with the `id_` flag (the original bytes); a video query reads the
 * video's newest non-notice watch capture.
 *
 * listVideos (./listVideos.ts) walks the captures of the channel's listing pages and looks every
 * video they link to up (./lookupVideo.ts): the captures of its watch page (then shorts/, embed/,
 * youtu.be/), newest first, skipping removal notices to older captures with a bounded bisection.
 *
 * Ownership: a video is reported only when its watch capture names this channel, or, when nothing
 * archived names its channel, when it was listed on an uploads-only tab (/videos, /streams, /shorts)
 * or under this channel's byline. Videos of other channels on a home page are not reported.
 */
import type { FetchOptions } from '../http.ts';
import type { VideoSource } from '../types.ts';
import { waybackCaptures } from './captures.ts';
import { DEFAULT_LIMITS, listWaybackVideos, type WaybackLimits } from './listVideos.ts';
import { resolveWaybackChannel } from './resolveChannel.ts';
import { waybackVideoById } from './videoById.ts';

export interface WaybackSourceOptions {
  cdxUrl?: string;
  /** Where captures are read: `{captureBaseUrl}/{timestamp}id_/{original}`. */
  captureBaseUrl?: string;
  /** What archiveUrl/evidenceUrl point to (the public Wayback), whatever captureBaseUrl is. */
  publicCaptureBaseUrl?: string;
  /** Timeouts and retry backoff of every call; `isTransient` is set by this source. */
  fetchOptions?: Omit<FetchOptions, 'isTransient' | 'signal'>;
  /** CDX rows per listing page (the `limit` of each resumed query). */
  pageSize?: number;
  limits?: Partial<WaybackLimits>;
}

export interface WaybackSource extends VideoSource {
  name: 'wayback';
}

export function createWaybackSource(options: WaybackSourceOptions = {}): WaybackSource {
  const limits: WaybackLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const captures = waybackCaptures({
    cdxUrl: options.cdxUrl ?? 'https://web.archive.org/cdx/search/cdx',
    captureBase: (options.captureBaseUrl ?? 'https://web.archive.org/web').replace(/\/+$/, ''),
    publicBase: (options.publicCaptureBaseUrl ?? 'https://web.archive.org/web').replace(/\/+$/, ''),
    fetchOptions: { timeoutMs: 20_000, retries: 2, minDelayMs: 1_000, maxDelayMs: 8_000, ...options.fetchOptions },
  });
  const listing = { captures, limits, pageSize: Math.max(1, options.pageSize ?? 25) };
  return {
    name: 'wayback',
    resolveChannel: (query, signal) => resolveWaybackChannel(captures, limits.capturesPerVideo, query, signal),
    listVideos: (channel, cursor, signal) => listWaybackVideos(listing, channel, cursor, signal),
    lookupVideo: (videoId, signal) => waybackVideoById(captures, videoId, limits.capturesPerVideo, signal),
  };
}
