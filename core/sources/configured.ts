import type { Config } from '../config.ts';
import { createArchiveSource } from './archive.ts';
import type { VideoSource } from './types.ts';
import { createWaybackSource } from './wayback.ts';
import { createYoutubeApiSource } from './youtubeApi.ts';

/**
 * The sources this deployment uses, in the order a crawl asks them: the local archive always
 * (offline), the YouTube Data API when a key is set, the Wayback Machine when enabled.
 */
export function configuredSources(config: Config): VideoSource[] {
  const fetchOptions = { timeoutMs: config.SOURCE_TIMEOUT_MS };
  const sources: VideoSource[] = [createArchiveSource({ dir: config.archiveDir })];
  if (config.YOUTUBE_API_KEY) {
    sources.push(createYoutubeApiSource({ apiKey: config.YOUTUBE_API_KEY, baseUrl: config.YOUTUBE_API_URL.replace(/\/$/, ''), fetchOptions }));
  }
  if (config.WAYBACK_ENABLED) {
    const base = config.WAYBACK_URL.replace(/\/$/, '');
    sources.push(createWaybackSource({ cdxUrl: `${base}/cdx/search/cdx`, captureBaseUrl: `${base}/web`, fetchOptions }));
  }
  return sources;
}
