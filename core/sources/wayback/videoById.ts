/**
 * lookupVideo of the Wayback source: the video's newest watch capture with metadata (see
 * ./lookupVideo.ts) and the channel that capture names. A video the archive knows only from a
 * removal notice names no channel, so it is not reported.
 */
import type { VideoSighting } from '../types.ts';
import type { WaybackCaptures } from './captures.ts';
import { lookupVideo } from './lookupVideo.ts';
import { videoRecord } from './records.ts';
import { channelOfWatchPage } from './resolveChannel.ts';

export async function waybackVideoById(
  captures: WaybackCaptures,
  videoId: string,
  capturesPerVideo: number,
  signal?: AbortSignal,
): Promise<VideoSighting | undefined> {
  const lookup = await lookupVideo(captures, videoId, capturesPerVideo, signal);
  if (lookup.kind !== 'metadata') return undefined;
  const channel = await channelOfWatchPage(captures, lookup.meta, capturesPerVideo, signal);
  const video = channel && videoRecord(captures, channel, { i: videoId }, lookup, undefined);
  return channel && video ? { video, channel } : undefined;
}
