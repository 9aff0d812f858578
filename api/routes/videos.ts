import { videoParams } from '../../core/schemas.ts';
import { statusHistorySchema } from '../../core/status/statusHistory.ts';
import { mediaTypes } from '../../core/videos/mediaFile.ts';
import { perform } from '../http/route.ts';
import { downloadVideoFile, readStatusHistory } from '../actions/videos.ts';
import { binaryBody, defineRoute, privateCache } from '../http/route.ts';

export const statusHistoryRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/status-history',
  tag: 'Video status',
  summary: "A video's current status and every change of it, oldest first",
  description:
    'status: checking (not verified yet), live, deleted, re-uploaded (deleted, with its content under another id: reuploadedAs). A deletion is recorded only after two probes, spaced in time, agree; transient answers never change a status.',
  auth: 'key',
  ...readStatusHistory.access,
  cache: privateCache,
  params: videoParams,
  response: statusHistorySchema,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(readStatusHistory, ctx, ctx.params.videoId);
  },
});

export const videoFileRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/file',
  tag: 'Video files',
  summary: "A video's archived media file, with byte ranges (HEAD too)",
  description:
    'The media file the local archive recorded for the video (the videoFileUrl of video objects), streamed with its media type by extension. One byte range per request (Range: bytes=a-b, bytes=a-, bytes=-n) answers 206 with Content-Range; several ranges, or a malformed Range, answer the whole file (200). A range outside the file is 416 with Content-Range: bytes */<size>. ETag and Last-Modified validate If-None-Match / If-Modified-Since (304), If-Range, If-Match / If-Unmodified-Since (412). 404 NOT_FOUND with details.reason unknown_video, no_archived_file, archive_removed (an operator removed the archive root holding it: afterimage archives remove) or file_missing. Counts only as a request (requestsPerMinute), never as a subtitle download.',
  auth: 'key',
  ...downloadVideoFile.access,
  params: videoParams,
  media: Object.fromEntries(mediaTypes.map((type) => [type, binaryBody])),
  servesFile: true,
  errors: ['NOT_FOUND'],
  cache: privateCache,
  async handler(ctx) {
    return perform(downloadVideoFile, ctx, { exchange: ctx, videoId: ctx.params.videoId });
  },
});
