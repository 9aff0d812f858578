import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { addArchiveRoot, listArchiveRoots, removeArchiveRoot } from '../../core/archives/archiveRoots.ts';
import { describeDatabaseLocation, databaseLocation } from '../../core/db/databaseLocation.ts';
import { output, parseOptions, requireDirectory, subcommand, table, UsageError, withDatabase } from '../cli.ts';
import { chooseDatabase, DATABASE_CHOICE, dataDirOption } from '../serviceDatabase.ts';

const USAGE = `usage:
  npx afterimage archives list [--all] [--data-dir DIR] [--json]     the archive roots crawls read (--all: removed ones too)
  npx afterimage archives add <dir> [--data-dir DIR] [--json]        crawls read this yt-dlp folder too (import loads it at once)
  npx afterimage archives remove <dir> [--data-dir DIR] [--json]     crawls stop reading it; no file and no stored video is deleted
${DATABASE_CHOICE}`;

const options = { ...dataDirOption, all: { type: 'boolean' } } as const;

/**
 * `afterimage archives list|add|remove`: the yt-dlp folders (archive roots, core/archives/) crawls,
 * subtitle fetches and the media route read beside ARCHIVE_DIR.
 */
export async function archivesCommand(command: string[]): Promise<void> {
  const [action, args] = subcommand(command, ['list', 'add', 'remove'], USAGE);
  const { values, positionals } = parseOptions(args, options, { usage: USAGE, positionals: true });
  if (action === 'list' && positionals.length === 0) {
    const chosen = await chooseDatabase(values['data-dir']);
    const roots = await withDatabase((db) => listArchiveRoots(db.sql, { removed: values.all ?? false }), { config: chosen.config });
    output(values.json, { archiveDir: chosen.config.archiveDir, roots }, () =>
      [
        `archive roots of ${describeDatabaseLocation(databaseLocation(chosen.config))}`,
        table(roots.map((root) => ({ path: root.path, added: root.addedAt.toISOString(), removed: root.removedAt?.toISOString() }))),
        `crawls also read ARCHIVE_DIR (here ${chosen.config.archiveDir}); add a folder with npx afterimage archives add <dir> or npx afterimage import <dir>`,
      ].join('\n'),
    );
    return;
  }
  if ((action === 'add' || action === 'remove') && positionals.length === 1) {
    const given = resolve(positionals[0]!);
    if (action === 'add') await requireDirectory(given);
    // A folder gone from disk can still be removed by the path it was stored under.
    const path = await realpath(given).catch(() => given);
    const chosen = await chooseDatabase(values['data-dir']);
    const changed = await withDatabase((db) => (action === 'add' ? addArchiveRoot : removeArchiveRoot)(db.sql, path), {
      config: chosen.config,
    });
    if (action === 'remove' && !changed)
      throw new UsageError(
        `${path} is not an archive root in use; npx afterimage archives list shows them (removing one never deletes files)`,
      );
    output(values.json, { path, action, changed }, () =>
      action === 'remove'
        ? `removed ${path}: crawls no longer read it and its files are no longer served; the files and the videos stored from it stay`
        : changed
          ? `added ${path}: the next channel search reads it (npx afterimage import ${path} loads all of it now, with its subtitles)`
          : `${path} is an archive root already`,
    );
    return;
  }
  throw new UsageError(USAGE);
}
