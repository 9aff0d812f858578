import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { databaseLocation, describeDatabaseLocation, sameDatabase } from '../../core/db/databaseLocation.ts';
import { runningServices } from '../../core/db/runningServices.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { loadArchiveSubtitles } from '../../core/import/loadArchiveSubtitles.ts';
import { storeArchiveScan, type SkippedFile } from '../../core/import/storeArchiveScan.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { output, parseOptions, setup, UsageError, withDatabase } from '../cli.ts';
import { progressBar } from '../progress.ts';

/** The exit code of an import that skipped something (files, videos or subtitle files it could not load). */
const PARTIAL_EXIT_CODE = 3;
const SKIPPED_SHOWN = 10;

const USAGE = `usage: afterimage import <yt-dlp archive directory> [--json]
exit codes: 0 everything imported, 3 imported but some files skipped (listed), 2 usage error, 1 failure`;

/**
 * `afterimage import <dir>`: loads a yt-dlp archive directory into the database: channels, videos,
 * the subtitle files beside them, then the did-you-mean vocabulary. Idempotent: a second run
 * changes nothing unless the files did. Media files beside a video set videoFileUrl. A file that
 * cannot be imported is skipped and listed, and the exit code is then 3.
 */
export async function importCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseOptions(args, {}, true);
  if (positionals.length !== 1) throw new UsageError(USAGE);
  const dir = resolve(positionals[0]!);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`${dir} is not a directory; give the folder yt-dlp wrote its .info.json files into`);
  const database = databaseLocation(setup().config);

  const scanning = progressBar('scanning');
  const scan = await scanArchive(dir, {
    onProgress: (progress) =>
      scanning.update(progress.filesParsed, progress.walkDone ? progress.metadataFiles : undefined, `${progress.filesFailed} unreadable`),
  });
  scanning.done(`${scan.stats.filesParsed} metadata files, ${scan.channels.length} channels, ${scan.videos.length} videos`);

  const { stored, subtitles, vocabulary } = await withDatabase(async (db, log) => {
    const storing = progressBar('storing');
    const stored = await storeArchiveScan(db.sql, scan, { log, onProgress: (done, total) => storing.update(done, total) });
    storing.done(`${stored.new} new, ${stored.updated} updated, ${stored.unchanged} unchanged, ${stored.skipped.length} skipped`);
    const loading = progressBar('subtitles');
    const subtitles = await loadArchiveSubtitles(db.sql, stored.storedVideos, log, (done, total) => loading.update(done, total));
    loading.done(`${subtitles.tracks} tracks of ${subtitles.videos} videos, ${subtitles.newVersions} new versions`);
    // Now, not at the crontab's next refresh: a typo of a title just imported gets its suggestion at once.
    return { stored, subtitles, vocabulary: await refreshSearchWords(db.sql) };
  });

  const skipped: SkippedFile[] = [...scan.warnings.map((warning) => ({ file: warning.file, reason: warning.message })), ...stored.skipped];
  const otherServices = (await runningServices()).filter((service) => !sameDatabase(service.database, database));
  const summary = {
    directory: dir,
    database,
    channels: scan.channels.length,
    videos: stored.storedVideos.length,
    new: stored.new,
    updated: stored.updated,
    unchanged: stored.unchanged,
    withMediaFile: stored.storedVideos.filter((video) => video.videoFileUrl).length,
    subtitles,
    vocabulary,
    skipped,
    partial: skipped.length > 0 || subtitles.problems.length > 0,
    servicesOnOtherDatabases: otherServices,
  };
  output(values.json, summary, () =>
    [
      `imported ${dir}`,
      `  into:      ${describeDatabaseLocation(database)}`,
      `  channels:  ${summary.channels}`,
      `  videos:    ${summary.videos} (${summary.new} new, ${summary.updated} updated, ${summary.unchanged} unchanged; ${summary.withMediaFile} with a media file)`,
      `  subtitles: ${subtitles.tracks} tracks of ${subtitles.videos} videos (${subtitles.newVersions} new versions)`,
      ...subtitles.problems.slice(0, SKIPPED_SHOWN).map((problem) => `    ${problem.videoId}: ${problem.reason}`),
      skipped.length ? `  skipped:   ${skipped.length} (not imported)` : '',
      ...skipped.slice(0, SKIPPED_SHOWN).map((entry) => `    ${entry.file ? `${entry.file}: ` : ''}${entry.reason}`),
      skipped.length > SKIPPED_SHOWN ? `    … and ${skipped.length - SKIPPED_SHOWN} more (--json lists them all)` : '',
      ...otherServices.map(
        (service) =>
          `note: a running afterimage service (${service.role}, pid ${service.pid}) uses ${describeDatabaseLocation(service.database)}, not this database; ` +
          'it will not see this import (run the import with the DATA_DIR or DATABASE_URL the service has)',
      ),
    ]
      .filter(Boolean)
      .join('\n'),
  );
  if (summary.partial) process.exitCode = PARTIAL_EXIT_CODE;
}
