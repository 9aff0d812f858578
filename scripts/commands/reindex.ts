import { reindexAll } from '../../core/fts/typesense/reindex.ts';
import { output, parseOptions, setup, UsageError, withDatabase } from '../cli.ts';
import { progressBar } from '../progress.ts';

/**
 * `afterimage reindex`: builds a new Typesense collection from every stored video, then points the
 * TYPESENSE_COLLECTION alias at it and drops the one it replaces. Searches go on meanwhile.
 */
export async function reindexCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, {});
  const { config, log } = setup();
  if (!config.TYPESENSE_URL) {
    throw new UsageError(
      'TYPESENSE_URL is not set: set TYPESENSE_URL (e.g. http://localhost:8108) and TYPESENSE_API_KEY to the Typesense server to index into, then run afterimage reindex again',
    );
  }
  const result = await withDatabase(async (db) => {
    const bar = progressBar('indexing');
    const done = await reindexAll({ config, sql: db.sql, log, onProgress: (indexed, total) => bar.update(indexed, total, 'videos') });
    bar.done(`${done.documents} videos into ${done.collection}`);
    return done;
  });
  output(
    values.json,
    result,
    () =>
      `indexed ${result.documents} videos into ${result.collection} in ${result.seconds} s; "${config.TYPESENSE_COLLECTION}" now points at it`,
  );
}
