/**
 * Finding a video that is not stored (an on-demand subtitle fetch of an unknown id): the video
 * sources are asked in their configured order (the local archive, the Data API, the Wayback
 * Machine) and the first that knows the video answers it, with its channel.
 */
import { DefiniteError } from '../sources/httpErrors.ts';
import type { SourceName, VideoSighting, VideoSource } from '../sources/types.ts';
import type { SourceProblem } from './fetchSubtitles.ts';

/** Pages of a channel read at most to find a video in a source without lookupVideo (the archive: 500 a page, in memory). */
const MAX_CHANNEL_PAGES = 200;

export interface VideoLookupResult {
  found?: { source: SourceName; sighting: VideoSighting };
  /** The sources asked, in order (up to the one that knew the video). */
  asked: SourceName[];
  problems: SourceProblem[];
}

/** The video in the pages of the channel the source names for it (sources that cannot look one video up). */
async function findInChannel(source: VideoSource, videoId: string, signal?: AbortSignal): Promise<VideoSighting | undefined> {
  const channel = await source.resolveChannel({ kind: 'video', videoId }, signal);
  if (!channel) return undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_CHANNEL_PAGES; page++) {
    const listed = await source.listVideos(channel, cursor, signal);
    const video = listed.videos.find((record) => record.videoId === videoId);
    if (video) return { video, channel };
    if (!listed.next) return undefined;
    cursor = listed.next;
  }
  return undefined;
}

export async function lookUpVideo(sources: readonly VideoSource[], videoId: string, signal?: AbortSignal): Promise<VideoLookupResult> {
  const asked: SourceName[] = [];
  const problems: SourceProblem[] = [];
  for (const source of sources) {
    signal?.throwIfAborted();
    asked.push(source.name);
    try {
      const sighting = source.lookupVideo ? await source.lookupVideo(videoId, signal) : await findInChannel(source, videoId, signal);
      if (sighting) return { found: { source: source.name, sighting }, asked, problems };
    } catch (error) {
      if (signal?.aborted) throw error;
      problems.push({
        source: source.name,
        message: error instanceof Error ? error.message : String(error),
        transient: !(error instanceof DefiniteError),
      });
    }
  }
  return { asked, problems };
}

/** Why a lookup found nothing: which sources were asked, and what failed. */
export function lookupFailure(result: VideoLookupResult): string {
  if (result.asked.length === 0) return 'no configured source knows this video: no video source is configured';
  const failed = result.problems.map((problem) => `${problem.source}: ${problem.message}`);
  return `no configured source knows this video (asked: ${result.asked.join(', ')})${failed.length ? `; ${failed.join('; ')}` : ''}`;
}
