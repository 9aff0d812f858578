/** lookupVideo of the Data API source: videos.list of one id, then its channel (2 units). */
import type { VideoSighting } from '../types.ts';
import { channelBy } from './channels.ts';
import type { ApiClient } from './client.ts';
import { listedVideo } from './listedVideo.ts';
import { VIDEO_PARTS } from './uploads.ts';

/** The video with its channel while videos.list still returns it; a 404 or a gone video reads as none. */
export async function lookupApiVideo(api: ApiClient, videoId: string, signal?: AbortSignal): Promise<VideoSighting | undefined> {
  const video = await listedVideo(api, videoId, VIDEO_PARTS, signal);
  if (!video) return undefined;
  const channel = await channelBy(api, { id: video.channelId }, signal);
  return { video, channel: channel ?? { channelId: video.channelId } };
}
