import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { scanArchive } from '../../core/sources/archive.ts';
import { upsertChannel } from '../../core/videos/upsertChannel.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { output, parseOptions, UsageError, withDatabase } from '../cli.ts';
import { progressBar } from '../progress.ts';

const BATCH = 1000;

/**
 * `afterimage import <dir>`: loads a yt-dlp archive directory into the database. Idempotent: a
 * second run changes nothing unless the files did. Media files beside a video set videoFileUrl.
 */
export async function importCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseOptions(args, {}, true);
  if (positionals.length !== 1) throw new UsageError('usage: afterimage import <yt-dlp archive directory> [--json]');
  const dir = resolve(positionals[0]!);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`${dir} is not a directory; give the folder yt-dlp wrote its .info.json files into`);

  const scanning = progressBar('scanning');
  const scan = await scanArchive(dir, {
    onProgress: (progress) => scanning.update(progress.filesParsed, progress.walkDone ? progress.metadataFiles : undefined, `${progress.filesFailed} unreadable`),
  });
  scanning.done(`${scan.stats.filesParsed} metadata files, ${scan.channels.length} channels, ${scan.videos.length} videos`);

  const withChannel = scan.videos.filter((video) => video.channelId);
  const summary = await withDatabase(async (db) => {
    for (const channel of scan.channels) await upsertChannel(db.sql, channel);
    const storing = progressBar('storing');
    let changed = 0;
    let inserted = 0;
    for (let offset = 0; offset < withChannel.length; offset += BATCH) {
      const batch = withChannel.slice(offset, offset + BATCH);
      const result = await db.sql.begin((tx) => upsertVideos(tx, 'archive', batch));
      changed += result.changed.length;
      inserted += result.inserted;
      storing.update(Math.min(offset + BATCH, withChannel.length), withChannel.length);
    }
    storing.done(`${inserted} new, ${changed - inserted} updated, ${withChannel.length - changed} unchanged`);
    return {
      directory: dir,
      channels: scan.channels.length,
      videos: withChannel.length,
      new: inserted,
      updated: changed - inserted,
      unchanged: withChannel.length - changed,
      withMediaFile: withChannel.filter((video) => video.videoFileUrl).length,
      skippedWithoutChannel: scan.videos.length - withChannel.length,
      warnings: scan.warnings,
    };
  });
  output(values.json, summary, () =>
    [
      `imported ${dir}`,
      `  channels: ${summary.channels}`,
      `  videos:   ${summary.videos} (${summary.new} new, ${summary.updated} updated, ${summary.unchanged} unchanged; ${summary.withMediaFile} with a media file)`,
      summary.skippedWithoutChannel ? `  skipped:  ${summary.skippedWithoutChannel} videos whose files name no channel` : '',
      summary.warnings.length ? `  warnings: ${summary.warnings.length}\n${summary.warnings.slice(0, 10).map((warning) => `    ${warning.file}: ${warning.message}`).join('\n')}` : '',
    ].filter(Boolean).join('\n'),
  );
}
