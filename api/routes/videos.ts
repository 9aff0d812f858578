import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { videoParams } from '../../core/schemas.ts';
import { statusHistorySchema } from '../../core/status/statusHistory.ts';
import { keptThumbnail } from '../../core/videos/keptThumbnail.ts';
import { mediaTypes } from '../../core/videos/mediaFile.ts';
import { RENDITION, THUMBNAIL_WIDTHS, thumbnailRendition, type ThumbnailWidth } from '../../core/videos/thumbnailImage.ts';
import { downloadVideoFile, readStatusHistory } from '../actions/videos.ts';
import { prepareAnswer } from '../http/representation.ts';
import { binaryBody, defineRoute, handled, perform, privateCache, type CachePolicy } from '../http/route.ts';

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

/**
 * A thumbnail read from the Wayback is bytes that never change (a capture); an archive's file may be
 * downloaded again, and a thumbnail found later in an archive replaces one read from the Wayback.
 * Either way the ETag names the exact rendition, so revalidating costs a 304.
 */
const WAYBACK_THUMBNAIL_CACHE: CachePolicy = { scope: 'public', maxAgeSeconds: 30 * 86_400 };
const ARCHIVE_THUMBNAIL_CACHE: CachePolicy = { scope: 'public', maxAgeSeconds: 86_400 };

/** Renditions made by this process, by ETag, the least recently used dropped past the budget. */
const RENDITION_BUDGET_BYTES = 32 * 2 ** 20;
const renditions = new Map<string, Buffer>();
let renditionBytes = 0;

async function rendition(etag: string, read: () => Promise<Buffer>, width: ThumbnailWidth): Promise<Buffer> {
  const kept = renditions.get(etag);
  if (kept) {
    renditions.delete(etag);
    renditions.set(etag, kept);
    return kept;
  }
  const image = await read();
  const made = await thumbnailRendition(image, width).catch(() => {
    throw new AppError('NOT_FOUND', 'the thumbnail kept of this video is not an image this server can read', {
      details: { reason: 'unreadable_image' },
    });
  });
  renditions.set(etag, made);
  renditionBytes += made.length;
  for (const [oldest, bytes] of renditions) {
    if (renditionBytes <= RENDITION_BUDGET_BYTES) break;
    renditions.delete(oldest);
    renditionBytes -= bytes.length;
  }
  return made;
}

const widths = THUMBNAIL_WIDTHS.map(String) as ['160', '320', '640'];

export const videoThumbnailRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/thumbnail',
  tag: 'Video files',
  summary: "A video's thumbnail, kept by this server, as 16:9 WebP at 160, 320 or 640 pixels wide (HEAD too)",
  description:
    "The thumbnail a local archive keeps beside the video (yt-dlp's --write-thumbnail), else the one the Wayback Machine archived with its watch page; cropped to 16:9 and scaled to w (160×90, 320×180 or 640×360). Public, as the video's page is: counted per address as a page request (pageRequestsPerMinute), and a 304 counts nothing. A strong ETag names the exact rendition; Cache-Control is public, a day for an archive's file and 30 days for a Wayback capture's bytes. 404 NOT_FOUND with details.reason unknown_video, no_thumbnail, archive_removed, file_missing or unreadable_image; pages show a placeholder instead.",
  auth: 'public',
  requestLimit: 'pageRequestsPerMinute',
  cache: ARCHIVE_THUMBNAIL_CACHE,
  params: videoParams,
  query: z.strictObject({
    w: z
      .enum(widths, { message: `expected one of the widths ${widths.join(', ')}` })
      .default('320')
      .describe('the width in pixels'),
  }),
  media: { 'image/webp': binaryBody },
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const width = Number(ctx.query.w) as ThumbnailWidth;
    const thumbnail = await keptThumbnail(ctx.deps.sql, ctx.params.videoId);
    const etag = `"${thumbnail.tag}-${width}-${RENDITION}"`;
    const answer = prepareAnswer(ctx, {
      contentType: 'image/webp',
      cache: thumbnail.source === 'wayback' ? WAYBACK_THUMBNAIL_CACHE : ARCHIVE_THUMBNAIL_CACHE,
      etag,
      modifiedAt: thumbnail.modifiedAt,
    });
    await answer?.send(await rendition(etag, thumbnail.read, width));
    return handled;
  },
});
