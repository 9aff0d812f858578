/**
 * The archived media file of a video, as the archive recorded it (videos.video_file_url, a file://
 * URL the archive scan wrote). Only that recorded path is ever opened: nothing a client sends
 * becomes a path.
 */
import { constants, open, type FileHandle } from 'node:fs/promises';
import { extname } from 'node:path';
import { archiveFileCheck } from '../archives/archiveRoots.ts';
import type { Queryable } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { localPath } from './localPath.ts';

/** Why a video has no file to serve: a 404's `details.reason`. */
type MissingReason = 'unknown_video' | 'no_archived_file' | 'archive_removed' | 'file_missing';

const missing = (reason: MissingReason, message: string) => new AppError('NOT_FOUND', message, { details: { reason } });

/** Media types by extension, for the extensions the archive scan takes for media (core/sources/archive/scan.ts). */
const MEDIA_TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mka: 'audio/x-matroska',
  mov: 'video/quicktime',
  flv: 'video/x-flv',
  '3gp': 'video/3gpp',
  avi: 'video/x-msvideo',
  wmv: 'video/x-ms-wmv',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  // yt-dlp's .opus files are Ogg Opus (RFC 7845 names audio/ogg for them).
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  aac: 'audio/aac',
};

const UNKNOWN_MEDIA_TYPE = 'application/octet-stream';

/** The media type of a file by its extension; unknown ones are plain bytes. */
export const mediaType = (path: string): string => MEDIA_TYPES[extname(path).slice(1).toLowerCase()] ?? UNKNOWN_MEDIA_TYPE;

/** Every media type a media file is served as. */
export const mediaTypes = [...new Set(Object.values(MEDIA_TYPES)), UNKNOWN_MEDIA_TYPE];

export interface MediaFile {
  /** Open for reading; whoever receives it closes it. */
  handle: FileHandle;
  size: number;
  modifiedAt: Date;
  /** Strong validator: the same inode, size and modification time are the same bytes. */
  etag: string;
  contentType: string;
  /** `<videoId>.<ext>`: names the download without showing the server's folder or file names. */
  fileName: string;
}

const fileGone = (videoId: string) => missing('file_missing', `the archived media file of video ${videoId} is no longer on disk`);

/** Opens the video's recorded media file; 404 (NOT_FOUND, with `details.reason`) when there is none to serve. */
export async function openMediaFile(sql: Queryable, videoId: string): Promise<MediaFile> {
  const [video] = await sql<Array<{ fileUrl: string | null }>>`select video_file_url as "fileUrl" from videos where video_id = ${videoId}`;
  if (!video) throw missing('unknown_video', `no video ${videoId} is stored; a channel search finds a channel's videos`);
  const path = video.fileUrl ? localPath(video.fileUrl) : undefined;
  if (!path) throw missing('no_archived_file', `video ${videoId} has no archived media file on this server`);
  if (!(await archiveFileCheck(sql))(path))
    throw missing(
      'archive_removed',
      `the archive folder holding the media file of video ${videoId} was removed from this server's archives`,
    );
  // Non-blocking: a FIFO put where the file was must not hang the request (regular files read as ever).
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' || error.code === 'ENOTDIR' ? fileGone(videoId) : error;
  });
  // Stat the open file, not the path: a file replaced or removed meanwhile cannot be half served.
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw fileGone(videoId);
    const extension = extname(path).slice(1).toLowerCase();
    return {
      handle,
      size: stats.size,
      modifiedAt: stats.mtime,
      etag: `"${[stats.ino, stats.size, Math.floor(stats.mtimeMs)].map((n) => n.toString(36)).join('-')}"`,
      contentType: mediaType(path),
      fileName: /^[a-z0-9]{1,10}$/.test(extension) ? `${videoId}.${extension}` : videoId,
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** How far into a WAV file its header's chunks are looked for. */
const WAV_HEADER_BYTES = 4096;

/**
 * The playing time of an open media file, when its header says it without decoding: WAV (RIFF
 * chunks: the fmt chunk's byte rate, the data chunk's size). Other formats: undefined.
 */
export async function mediaSeconds(file: MediaFile): Promise<number | undefined> {
  if (file.contentType !== 'audio/wav') return undefined;
  const header = Buffer.alloc(Math.min(WAV_HEADER_BYTES, file.size));
  const { bytesRead } = await file.handle.read(header, 0, header.length, 0);
  if (bytesRead < 12 || header.toString('latin1', 0, 4) !== 'RIFF' || header.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= bytesRead; at += 8 + header.readUInt32LE(at + 4) + (header.readUInt32LE(at + 4) % 2)) {
    const id = header.toString('latin1', at, at + 4);
    if (id === 'fmt ' && at + 16 <= bytesRead) byteRate = header.readUInt32LE(at + 16);
    if (id === 'data') return byteRate ? Math.min(header.readUInt32LE(at + 4), file.size - at - 8) / byteRate : undefined;
  }
  return undefined;
}
