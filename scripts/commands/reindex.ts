import { loadConfig } from '../../core/config.ts';
import { reindexAll } from '../../core/fts/typesense/reindex.ts';
import { output, parseOptions, UsageError, withDatabase } from '../cli.ts';
import { progressBar } from '../progress.ts';
import { chooseDatabase, DATABASE_CHOICE, dataDirOption } from '../serviceDatabase.ts';

const USAGE = `usage: npx afterimage reindex [--data-dir DIR] [--json]
rebuilds the Typesense search index (TYPESENSE_URL) from every stored video, then switches searches to it. ${DATABASE_CHOICE}`;

/**
 * `afterimage reindex`: builds a new Typesense collection from every stored video, then points the
 * TYPESENSE_COLLECTION alias at it and drops the one it replaces. Searches go on meanwhile.
 */
export async function reindexCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, dataDirOption, { usage: USAGE });
  if (!loadConfig().TYPESENSE_URL) {
    throw new UsageError(
      'TYPESENSE_URL is not set: set TYPESENSE_URL (e.g. http://localhost:8108) and TYPESENSE_API_KEY to the Typesense server to index into, then run npx afterimage reindex again',
    );
  }
  const { config } = await chooseDatabase(values['data-dir']);
  const result = await withDatabase(
    async (db, log) => {
      const bar = progressBar('indexing');
      const done = await reindexAll({ config, sql: db.sql, log, onProgress: (indexed, total) => bar.update(indexed, total, 'videos') });
      bar.done(`${done.documents} videos into ${done.collection}`);
      return done;
    },
    { config },
  );
  output(
    values.json,
    result,
    () =>
      `indexed ${result.documents} videos into ${result.collection} in ${result.seconds} s; "${config.TYPESENSE_COLLECTION}" now points at it`,
  );
}
