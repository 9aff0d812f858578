import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { addArchiveRoot } from '../../core/archives/archiveRoots.ts';
import { databaseLocation, describeDatabaseLocation, sameDatabase } from '../../core/db/databaseLocation.ts';
import { runningServices } from '../../core/db/runningServices.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { loadArchiveSubtitles } from '../../core/import/loadArchiveSubtitles.ts';
import { storeArchiveScan, type SkippedFile } from '../../core/import/storeArchiveScan.ts';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { output, parseOptions, requireDirectory, UsageError, withDatabase } from '../cli.ts';
import { progressBar } from '../progress.ts';
import { chooseDatabase, DATABASE_CHOICE, dataDirOption, describeService } from '../serviceDatabase.ts';

/** The exit code of an import that skipped something (files, videos or subtitle files it could not load). */
const PARTIAL_EXIT_CODE = 3;
const SKIPPED_SHOWN = 10;

const USAGE = `usage: npx afterimage import <yt-dlp archive directory> [--data-dir DIR] [--json]
loads the folder's videos, channels and subtitle files; the folder becomes an archive root that later
crawls read (npx afterimage archives list). ${DATABASE_CHOICE}
exit codes: 0 everything imported, 3 imported but some files skipped (listed), 2 usage error (also:
no service, or several, and no database named; a folder with no yt-dlp video in it), 1 failure`;

/**
 * `afterimage import <dir>`: loads a yt-dlp archive directory into the database: channels, videos,
 * the subtitle files beside them, then the did-you-mean vocabulary, and keeps the folder as an
 * archive root (core/archives/) that later crawls read. Idempotent: a second run changes nothing
 * unless the files did. Media files beside a video set videoFileUrl. A file that cannot be imported
 * is skipped and listed, and the exit code is then 3. The database is the running service's unless
 * one is named (scripts/serviceDatabase.ts).
 */
export async function importCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseOptions(args, dataDirOption, { usage: USAGE, positionals: true });
  if (positionals.length !== 1) throw new UsageError(USAGE);
  const given = resolve(positionals[0]!);
  await requireDirectory(given);
  // The real path: the archive root and every file recorded under it name the folder one way.
  const dir = await realpath(given);
  const chosen = await chooseDatabase(values['data-dir']);
  const database = databaseLocation(chosen.config);
  if (chosen.service && !values.json)
    process.stderr.write(`importing into the running service's database (${describeService(chosen.service)})\n`);

  const scanning = progressBar('scanning');
  const scan = await scanArchive(dir, {
    onProgress: (progress) =>
      scanning.update(progress.filesParsed, progress.walkDone ? progress.metadataFiles : undefined, `${progress.filesFailed} unreadable`),
  });
  scanning.done(`${scan.stats.filesParsed} metadata files, ${scan.channels.length} channels, ${scan.videos.length} videos`);
  // Nothing to load: kept as an archive root, a wrong folder would be read by every crawl for good.
  if (scan.videos.length === 0)
    throw new UsageError(
      `${dir} holds no yt-dlp video (${scan.stats.metadataFiles} metadata files, ${scan.stats.filesFailed} unreadable): nothing was imported and it was not kept as an archive root; give the folder yt-dlp wrote its .info.json files into`,
    );

  const { stored, subtitles, vocabulary, archiveRootAdded } = await withDatabase(
    async (db, log) => {
      const storing = progressBar('storing');
      const stored = await storeArchiveScan(db.sql, scan, { log, onProgress: (done, total) => storing.update(done, total) });
      storing.done(`${stored.new} new, ${stored.updated} updated, ${stored.unchanged} unchanged, ${stored.skipped.length} skipped`);
      const loading = progressBar('subtitles');
      const subtitles = await loadArchiveSubtitles(db.sql, stored.storedVideos, log, (done, total) => loading.update(done, total));
      loading.done(`${subtitles.tracks} tracks of ${subtitles.videos} videos, ${subtitles.newVersions} new versions`);
      // Now, not at the crontab's next refresh: a typo of a title just imported gets its suggestion at once.
      const vocabulary = await refreshSearchWords(db.sql);
      // The worker re-runs the saved queries over what was stored (the service's worker, once it runs).
      if (stored.new + stored.updated > 0) await enqueue(db.sql, 'run_saved_queries', {}, { jobKey: 'run_saved_queries' });
      return { stored, subtitles, vocabulary, archiveRootAdded: await addArchiveRoot(db.sql, dir) };
    },
    { config: chosen.config },
  );

  const skipped: SkippedFile[] = [...scan.warnings.map((warning) => ({ file: warning.file, reason: warning.message })), ...stored.skipped];
  const otherServices = (await runningServices()).filter((service) => !sameDatabase(service.database, database));
  const summary = {
    directory: dir,
    database,
    runningService: chosen.service ?? null,
    archiveRoot: { path: dir, added: archiveRootAdded },
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
      `  into:      ${describeDatabaseLocation(database)}${chosen.service ? `, the running service's (pid ${chosen.service.pid})` : ''}`,
      `  archive:   ${dir} ${archiveRootAdded ? 'is now an archive root: crawls read it' : 'was an archive root already'} (npx afterimage archives list)`,
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
