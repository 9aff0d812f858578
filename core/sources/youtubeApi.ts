/**
 * The YouTube Data API v3 as a video source: channels by handle, id, legacy username, custom URL or
 * one of their videos (./youtubeApi/channels.ts); a channel's videos through its uploads playlist,
 * 50 at a time, completed by videos.list (./youtubeApi/uploads.ts).
 *
 * Quota (units per call): channels.list 1, playlistItems.list 1, videos.list 1, search.list 100; only
 * a custom URL (youtube.com/c/name) needs a search. A page of 50 videos costs 2 units, one video
 * looked up by its id (./youtubeApi/video.ts) 2 units.
 *
 * The key travels in the `key` query parameter and never appears in an error message.
 */
import type { FetchOptions } from './http.ts';
import type { VideoSource } from './types.ts';
import { resolveApiChannel } from './youtubeApi/channels.ts';
import { createApiClient, PAGE_SIZE } from './youtubeApi/client.ts';
import { listUploads } from './youtubeApi/uploads.ts';
import { lookupApiVideo } from './youtubeApi/video.ts';
import { listItems } from './youtubeApiParse.ts';

export interface YoutubeApiSourceOptions {
  apiKey: string;
  /** YOUTUBE_API_URL; tests point it at a local server. */
  baseUrl: string;
  /** Timeouts and retry backoff of every call; `isTransient` is set by this source. */
  fetchOptions?: Omit<FetchOptions, 'isTransient'>;
}

export interface YoutubeApiSource extends VideoSource {
  /** Which of these ids (at most 50) videos.list still returns: the others are not public any more. */
  publicVideoIds(videoIds: string[], signal?: AbortSignal): Promise<Set<string>>;
  name: 'youtube_api';
  /** Quota units the calls made so far cost (retries not counted), as the API bills them. */
  readonly quotaUnitsUsed: number;
}

export function createYoutubeApiSource(options: YoutubeApiSourceOptions): YoutubeApiSource {
  const { apiKey, fetchOptions = {} } = options;
  if (!apiKey) throw new Error('the YouTube Data API source needs an API key');
  const api = createApiClient(apiKey, options.baseUrl.replace(/\/+$/, ''), fetchOptions);

  async function publicVideoIds(videoIds: string[], signal?: AbortSignal): Promise<Set<string>> {
    if (videoIds.length > PAGE_SIZE) throw new Error(`videos.list takes at most ${PAGE_SIZE} ids`);
    const response = await api.call('videos', { part: 'id', id: videoIds.join(',') }, signal);
    return new Set(
      listItems(response)
        .map((item) => item.id)
        .filter((id): id is string => typeof id === 'string'),
    );
  }

  return {
    name: 'youtube_api',
    get quotaUnitsUsed() {
      return api.quotaUnitsUsed;
    },
    resolveChannel: (query, signal) => resolveApiChannel(api, query, signal),
    listVideos: (channel, cursor, signal) => listUploads(api, channel, cursor, signal),
    lookupVideo: (videoId, signal) => lookupApiVideo(api, videoId, signal),
    publicVideoIds,
  };
}
