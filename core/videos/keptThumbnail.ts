/**
 * The thumbnail this server keeps of a video (video_thumbnails), as GET /api/videos/:videoId/thumbnail
 * serves it: the archive's file when it may still be read, else the bytes read from the Wayback.
 * Only recorded paths are opened: nothing a client sends becomes a path.
 */
import { readFile, stat } from 'node:fs/promises';
import { archiveFileCheck } from '../archives/archiveRoots.ts';
import type { Queryable } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { localPath } from './localPath.ts';

/** Why a video has no thumbnail to serve: a 404's `details.reason`. */
type MissingReason = 'unknown_video' | 'no_thumbnail' | 'archive_removed' | 'file_missing';

/** An archive's thumbnail larger than this is not one (yt-dlp's largest, maxresdefault.jpg, is well under 1 MB). */
const MAX_THUMBNAIL_BYTES = 8 * 2 ** 20;

export interface KeptThumbnail {
  source: 'archive' | 'wayback';
  /** Names these exact bytes: the file's inode, size and modification time, or the Wayback image's hash. */
  tag: string;
  modifiedAt: Date;
  /** The image's bytes, read only when a rendition has to be made. */
  read(): Promise<Buffer>;
}

const missing = (reason: MissingReason, message: string) => new AppError('NOT_FOUND', message, { details: { reason } });

/** The archive's file, or why it cannot be served (it was removed, or its root was). */
async function archiveFile(path: string, readable: boolean): Promise<KeptThumbnail | MissingReason> {
  if (!readable) return 'archive_removed';
  const stats = await stat(path).catch(() => undefined);
  if (!stats?.isFile() || stats.size > MAX_THUMBNAIL_BYTES) return 'file_missing';
  return {
    source: 'archive',
    tag: ['a', stats.ino, stats.size, Math.floor(stats.mtimeMs)].map((n) => n.toString(36)).join('-'),
    modifiedAt: stats.mtime,
    read: () => readFile(path),
  };
}

/** The video's thumbnail; 404 (NOT_FOUND, with `details.reason`) when none can be served. */
export async function keptThumbnail(sql: Queryable, videoId: string): Promise<KeptThumbnail> {
  const rows = await sql<{ source: 'archive' | 'wayback' | null; fileUrl: string | null; hash: string | null; fetchedAt: Date | null }[]>`
    select t.source, t.file_url as "fileUrl", t.content_hash as hash, t.fetched_at as "fetchedAt"
    from videos v left join video_thumbnails t on t.video_id = v.video_id
    where v.video_id = ${videoId} order by t.source = 'archive' desc`;
  if (rows.length === 0) throw missing('unknown_video', `no video ${videoId} is stored; a channel search finds a channel's videos`);
  let reason: MissingReason = 'no_thumbnail';
  const readable = await archiveFileCheck(sql);
  for (const row of rows) {
    if (row.source === 'wayback') {
      return {
        source: 'wayback',
        tag: `w-${row.hash!.slice(0, 24)}`,
        modifiedAt: row.fetchedAt!,
        read: async () => {
          const [kept] = await sql<
            { bytes: Buffer }[]
          >`select bytes from video_thumbnails where video_id = ${videoId} and source = 'wayback'`;
          if (!kept) throw missing('no_thumbnail', `the thumbnail of video ${videoId} is no longer kept`);
          return kept.bytes;
        },
      };
    }
    const path = row.fileUrl ? localPath(row.fileUrl) : undefined;
    if (!path) continue;
    const file = await archiveFile(path, readable(path));
    if (typeof file !== 'string') return file;
    reason = file;
  }
  throw missing(
    reason,
    reason === 'no_thumbnail'
      ? `this server keeps no thumbnail of video ${videoId}`
      : `the archived thumbnail of video ${videoId} can no longer be read (${reason.replace('_', ' ')})`,
  );
}
