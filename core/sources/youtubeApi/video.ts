/** lookupVideo of the Data API source: videos.list of one id, then its channel (2 units). */
import { DefiniteError } from '../http.ts';
import type { VideoSighting } from '../types.ts';
import { listItems, videoFromApi } from '../youtubeApiParse.ts';
import { channelBy } from './channels.ts';
import type { ApiClient } from './client.ts';
import { VIDEO_PARTS } from './uploads.ts';

/** The video with its channel while videos.list still returns it; a 404 or a gone video reads as none. */
export async function lookupApiVideo(api: ApiClient, videoId: string, signal?: AbortSignal): Promise<VideoSighting | undefined> {
  let response: unknown;
  try {
    response = await api.call('videos', { part: VIDEO_PARTS, id: videoId }, signal);
  } catch (error) {
    if (error instanceof DefiniteError && error.status === 404) return undefined;
    throw error;
  }
  const video = listItems(response)
    .map((item) => videoFromApi(item))
    .find((record) => record?.videoId === videoId);
  if (!video) return undefined;
  const channel = await channelBy(api, { id: video.channelId }, signal);
  return { video, channel: channel ?? { channelId: video.channelId } };
}
