import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { createArchiveRootsSource } from './archiveRoots.ts';
import type { FetchOptions } from './http.ts';
import type { VideoSource } from './types.ts';
import { createWaybackSource } from './wayback/source.ts';
import { waybackThumbnailFetcher, type WaybackThumbnailFetcher } from './wayback/thumbnail.ts';
import { createYoutubeApiSource } from './youtubeApi.ts';

/** How every outbound request of this deployment is made: its timeout, and its size cap when one is set. */
export const sourceFetchOptions = (config: Config): FetchOptions => ({
  timeoutMs: config.SOURCE_TIMEOUT_MS,
  ...(config.SOURCE_MAX_RESPONSE_BYTES === undefined ? {} : { maxBytes: config.SOURCE_MAX_RESPONSE_BYTES }),
});

/**
 * The sources this deployment uses, in the order a crawl asks them: the local archive always
 * (offline: ARCHIVE_DIR and the stored archive roots), the YouTube Data API when a key is set, the
 * Wayback Machine when enabled.
 */
export function configuredSources(config: Config, storedRoots: () => Promise<string[]>): VideoSource[] {
  const fetchOptions = sourceFetchOptions(config);
  const sources: VideoSource[] = [createArchiveRootsSource({ dir: config.archiveDir, storedRoots })];
  if (config.YOUTUBE_API_KEY) {
    sources.push(createYoutubeApiSource({ apiKey: config.YOUTUBE_API_KEY, baseUrl: config.YOUTUBE_API_URL, fetchOptions }));
  }
  if (config.WAYBACK_ENABLED) {
    sources.push(
      createWaybackSource({ cdxUrl: `${waybackBase(config)}/cdx/search/cdx`, captureBaseUrl: `${waybackBase(config)}/web`, fetchOptions }),
    );
  }
  return sources;
}

const waybackBase = (config: Config) => config.WAYBACK_URL.replace(/\/$/, '');

/** How thumbnails of the videos the Wayback source found are read (the fetch_thumbnail task); undefined without the Wayback. */
export function configuredWaybackThumbnails(config: Config): WaybackThumbnailFetcher | undefined {
  if (!config.WAYBACK_ENABLED) return undefined;
  return waybackThumbnailFetcher({ captureBase: `${waybackBase(config)}/web`, fetchOptions: sourceFetchOptions(config) });
}

/**
 * Warms every source up in the background at process start, so the first search does not wait for
 * the archive's index (each process keeps its own). A search that comes earlier joins the build.
 */
export function warmUpSources(sources: VideoSource[], log: Logger): Promise<void> {
  return Promise.all(
    sources.map(async (source) => {
      if (!source.warmUp) return;
      const started = Date.now();
      try {
        const facts = await source.warmUp();
        log.info('source ready', { source: source.name, ms: Date.now() - started, ...facts });
      } catch (error) {
        log.warn('source warm-up failed; it is retried at its first use', { source: source.name, err: error });
      }
    }),
  ).then(() => undefined);
}
