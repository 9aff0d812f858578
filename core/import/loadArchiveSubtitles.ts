/**
 * Loads the subtitle files yt-dlp wrote beside the imported videos' info.json, the way the
 * fetch_subtitles job does (core/subtitles/fetchSubtitles.ts with the archive source only): parsed,
 * normalised, a new version only when the text changed, the transcript chosen again. So a second
 * import of the same folder adds no version.
 */
import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { VideoRecord } from '../sources/types.ts';
import { keepSubtitleAnswers } from '../status/keepObservations.ts';
import { fetchSubtitles } from '../subtitles/fetchSubtitles.ts';
import { archiveSubtitleSource } from '../subtitles/sources.ts';
import { localPath } from '../videos/localPath.ts';

/** The folder the scan read a record from: its file's path without the path inside the folder (evidencePath). */
function scannedFolder(video: VideoRecord): string[] {
  const path = video.evidenceUrl ? localPath(video.evidenceUrl) : undefined;
  return path && video.evidencePath && path.endsWith(video.evidencePath) ? [path.slice(0, -video.evidencePath.length)] : [];
}

/** Videos loaded at once: file reads overlap, and the pool keeps connections for the rest. */
const CONCURRENCY = 4;

export interface LoadedSubtitles {
  /** Videos with subtitle files beside them. */
  videos: number;
  /** Tracks read from the files that hold cues. */
  tracks: number;
  /** Versions stored by this import (0 when the files did not change since the last one). */
  newVersions: number;
  /** Files that could not be read or parsed. */
  problems: Array<{ videoId: string; reason: string }>;
}

export async function loadArchiveSubtitles(
  sql: Sql,
  videos: readonly VideoRecord[],
  log: Logger,
  onProgress?: (done: number, total: number) => void,
): Promise<LoadedSubtitles> {
  const withFiles = videos.filter((video) => video.captions?.length);
  const sources = [archiveSubtitleSource([...new Set(withFiles.flatMap(scannedFolder))])];
  const loaded: LoadedSubtitles = { videos: withFiles.length, tracks: 0, newVersions: 0, problems: [] };
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < withFiles.length) {
      const { videoId } = withFiles[next++]!;
      const report = await fetchSubtitles(sql, sources, videoId, { log, finalAttempt: true, keepAnswers: keepSubtitleAnswers });
      loaded.tracks += report?.found ?? 0;
      loaded.newVersions += report?.stored.length ?? 0;
      for (const problem of report?.problems ?? []) loaded.problems.push({ videoId, reason: problem.message });
      onProgress?.(++done, withFiles.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, withFiles.length) }, worker));
  return loaded;
}
