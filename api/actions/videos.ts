/**
 * Stored videos as callers read them: the video, its status history, its archived media file. The
 * /api/videos routes, the video page and the get_video, get_video_status_history tools perform these.
 */
import { notFound } from '../../core/errors.ts';
import { statusHistory } from '../../core/status/statusHistory.ts';
import { openMediaFile } from '../../core/videos/mediaFile.ts';
import { loadVideos } from '../../core/videos/loadVideos.ts';
import type { VideoObject } from '../../core/videos/videoObject.ts';
import { sendFile } from '../http/sendFile.ts';
import { handled, type Exchange } from '../http/route.ts';
import { defineAction } from '../http/route.ts';

export const readVideo = defineAction({
  what: 'reading a video',
  access: { scope: 'L1' },
  async run({ deps }, videoId: string): Promise<VideoObject> {
    const [video] = await loadVideos(deps.sql, [videoId]);
    if (!video) throw notFound(`no video ${videoId} is kept in the archive; search for its channel to find it`);
    return video;
  },
});

/** The current status (reason, since, confirmation, re-upload links) and every change, oldest first. */
export const readStatusHistory = defineAction({
  what: 'status history',
  access: { scope: 'L1', feature: 'statusHistory' },
  run({ deps }, videoId: string) {
    return statusHistory(deps.sql, videoId);
  },
});

/** The archived media of a video, with byte ranges and conditional requests; counts only as a request. */
export const downloadVideoFile = defineAction({
  what: 'archived media files',
  access: { scope: 'L1', feature: 'subtitleDownload' },
  async run({ deps }, { exchange, videoId }: { exchange: Exchange; videoId: string }): Promise<typeof handled> {
    await sendFile(exchange, await openMediaFile(deps.sql, videoId));
    return handled;
  },
});
