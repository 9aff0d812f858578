/**
 * Stores what a scan of a yt-dlp archive found: its channels, then its videos in batches, each batch
 * in one transaction. A batch the database refuses is stored again video by video, so a row that
 * breaks a constraint skips itself (with the database's reason) and never the rest of the import.
 */
import { fileURLToPath } from 'node:url';
import type { Queryable, Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { ArchiveScan } from '../sources/archive.ts';
import type { VideoRecord } from '../sources/types.ts';
import { keepSourceAnswers } from '../status/keepObservations.ts';
import { recordChannelNames } from '../videos/recordChannelNames.ts';
import { upsertChannel, upsertVideos } from '../videos/upsertVideos.ts';

const BATCH = 1000;

/** A file, or a record of one, that was not imported, and why (file null: a channel, known from several files). */
export interface SkippedFile {
  file: string | null;
  reason: string;
}

export interface StoredScan {
  new: number;
  updated: number;
  unchanged: number;
  /** Videos stored (new, updated or unchanged): what the subtitles and the vocabulary are loaded for. */
  storedVideos: VideoRecord[];
  skipped: SkippedFile[];
}

/**
 * Whether the database refused the data itself (SQLSTATE class 22 data exception, 23 integrity
 * constraint violation), as opposed to a failure of the database (connection, timeout), which
 * retrying row by row would only repeat.
 */
function refusedData(error: unknown): error is Error {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

const fileOf = (video: VideoRecord) =>
  video.evidenceUrl?.startsWith('file:') ? fileURLToPath(video.evidenceUrl) : (video.evidenceUrl ?? null);

export async function storeArchiveScan(
  sql: Sql,
  scan: ArchiveScan,
  options: { log?: Logger; onProgress?: (stored: number, total: number) => void } = {},
): Promise<StoredScan> {
  const { log, onProgress } = options;
  const skipped: SkippedFile[] = [];
  for (const channel of scan.channels) {
    try {
      await upsertChannel(sql, channel, log);
      const names = scan.channelNames.get(channel.channelId);
      if (names) await recordChannelNames(sql, channel.channelId, names);
    } catch (error) {
      if (!refusedData(error)) throw error;
      // Its videos are refused with it (their channel row cannot exist) and listed one by one below.
      skipped.push({ file: null, reason: `channel ${channel.channelId}: ${error.message}` });
    }
  }
  const result: StoredScan = { new: 0, updated: 0, unchanged: 0, storedVideos: [], skipped };
  const count = (stored: VideoRecord[], outcome: { changed: unknown[]; inserted: number }) => {
    result.new += outcome.inserted;
    result.updated += outcome.changed.length - outcome.inserted;
    result.unchanged += stored.length - outcome.changed.length;
    result.storedVideos.push(...stored);
  };
  // The videos and the archive files behind what they decided (core/status/keepObservations.ts).
  const storeVideos = async (tx: Queryable, videos: VideoRecord[]) => {
    const stored = await upsertVideos(tx, 'archive', videos, log);
    await keepSourceAnswers(tx, 'archive', videos, stored);
    return stored;
  };
  for (let offset = 0; offset < scan.videos.length; offset += BATCH) {
    const batch = scan.videos.slice(offset, offset + BATCH);
    try {
      count(batch, await sql.begin((tx) => storeVideos(tx, batch)));
    } catch (error) {
      if (!refusedData(error)) throw error;
      for (const video of batch) {
        try {
          count([video], await sql.begin((tx) => storeVideos(tx, [video])));
        } catch (rowError) {
          if (!refusedData(rowError)) throw rowError;
          skipped.push({ file: fileOf(video), reason: `video ${video.videoId}: ${rowError.message}` });
        }
      }
    }
    onProgress?.(Math.min(offset + BATCH, scan.videos.length), scan.videos.length);
  }
  return result;
}
