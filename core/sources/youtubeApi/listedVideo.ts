import { DefiniteError } from '../httpErrors.ts';
import type { VideoRecord } from '../types.ts';
import { listItems, videoFromApi } from '../youtubeApiParse.ts';
import type { ApiClient } from './client.ts';

/** One video as videos.list returns it (1 unit); a 404 or a video it no longer returns reads as none. */
export async function listedVideo(api: ApiClient, videoId: string, part: string, signal?: AbortSignal): Promise<VideoRecord | undefined> {
  let response: unknown;
  try {
    response = await api.call('videos', { part, id: videoId }, signal);
  } catch (error) {
    if (error instanceof DefiniteError && error.status === 404) return undefined;
    throw error;
  }
  return listItems(response)
    .map((item) => videoFromApi(item))
    .find((record) => record?.videoId === videoId);
}
