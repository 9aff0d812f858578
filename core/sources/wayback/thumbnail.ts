/**
 * A video's thumbnail as the Wayback Machine archived it: the platform's hqdefault.jpg, read with
 * the `im_` flag (the image's own bytes) at the time of the video's watch capture, which the
 * Wayback answers with its capture of the image nearest that time.
 */
import { fetchBytes, type FetchOptions } from '../http.ts';
import { DefiniteError } from '../httpErrors.ts';
import { upstreamFor } from '../upstream.ts';

/** The image URL a watch page of the video names (og:image, thumbnailUrl), in every era of the page. */
const thumbnailOf = (videoId: string) => `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`;

/** The 14-digit timestamp of a capture URL (`…/web/20200101000000/https://…`). */
export const captureTimestamp = (captureUrl: string): string | undefined => /\/web\/(\d{14})(?:[a-z]{2}_)?\//.exec(captureUrl)?.[1];

export interface WaybackThumbnailFetcher {
  /** The image's bytes and the public URL of its capture; undefined when the Wayback holds none. */
  (videoId: string, timestamp: string, signal?: AbortSignal): Promise<{ bytes: Buffer; captureUrl: string } | undefined>;
}

/** Reads thumbnails from `captureBase` (WAYBACK_URL's /web), naming them by `publicBase` (the public Wayback). */
export function waybackThumbnailFetcher(options: {
  captureBase: string;
  publicBase?: string;
  fetchOptions: Omit<FetchOptions, 'isTransient' | 'signal'>;
}): WaybackThumbnailFetcher {
  const captureBase = options.captureBase.replace(/\/+$/, '');
  const publicBase = (options.publicBase ?? 'https://web.archive.org/web').replace(/\/+$/, '');
  const upstream = upstreamFor('wayback', [captureBase]);
  return async (videoId, timestamp, signal) => {
    const path = `${timestamp}im_/${thumbnailOf(videoId)}`;
    try {
      const { body } = await fetchBytes(
        upstream,
        `${captureBase}/${path}`,
        signal ? { ...options.fetchOptions, signal } : options.fetchOptions,
      );
      return { bytes: body, captureUrl: `${publicBase}/${path}` };
    } catch (error) {
      if (error instanceof DefiniteError) return undefined; // never captured, or not replayable
      throw error;
    }
  };
}
