import { ConfigError, type Config } from '../../config.ts';
import type { Sql } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { call, retryOverrides, typesenseTarget, type TypesenseTarget } from './client.ts';
import { collectionSchema, documentsAfter, upsertDocuments } from './documents.ts';
import { pauseSync, resumeSync } from './sync.ts';

/** A full reindex into a new collection behind the alias. */

const REINDEX_BATCH = 5_000;

export interface ReindexOptions {
  config: Config;
  sql: Sql;
  log: Logger;
  onProgress?: (done: number, total: number) => void;
  retries?: number;
  minDelayMs?: number;
}

export interface ReindexResult {
  collection: string;
  documents: number;
  seconds: number;
}

const timestamp = (date: Date) => date.toISOString().replace(/\D/g, '').slice(0, 14);

/**
 * Builds `<alias>_<yyyymmddhhmmss>` from every video, points the alias at it, then drops the collection
 * the alias pointed at before. Searches keep using the old collection until the switch. A failure drops
 * the half-built collection and leaves the alias alone.
 */
export async function reindexAll(options: ReindexOptions): Promise<ReindexResult> {
  const { config, sql, log } = options;
  const target = typesenseTarget(config, log, { purpose: 'indexing', ...retryOverrides(options) });
  if (!target)
    throw new ConfigError([
      'TYPESENSE_URL: not set; set it (e.g. http://localhost:8108) and TYPESENSE_API_KEY to the server to index into',
    ]);
  const started = Date.now();
  const aliases = target.client.aliases();
  const previous = await call(target, `read the alias "${target.alias}"`, () => target.client.aliases(target.alias).retrieve(), {
    404: () => undefined,
  });
  await pauseSync(sql);
  let collection: string | undefined;
  try {
    collection = await createCollection(target);
    const documents = await fillCollection(target, sql, collection, previous?.collection_name ?? 'nothing', options.onProgress);
    // Waits for index_videos batches still writing through the alias, so none lands in the new collection late.
    const newCollection = collection;
    await sql.begin(async (tx) => {
      await tx`lock table search_sync_queue in share mode`;
      await call(target, `point the alias "${target.alias}" at "${newCollection}"`, () =>
        aliases.upsert(target.alias, { collection_name: newCollection }),
      );
    });
    if (previous && previous.collection_name !== collection) {
      await call(
        target,
        `drop the previous collection "${previous.collection_name}"`,
        () => target.client.collections(previous.collection_name).delete(),
        { 404: () => undefined },
      ).catch((error: unknown) =>
        log.warn('the previous collection could not be dropped: drop it by hand', { collection: previous.collection_name, err: error }),
      );
    }
    return { collection, documents, seconds: Math.round((Date.now() - started) / 100) / 10 };
  } catch (error) {
    if (collection) {
      const half = collection;
      await call(target, `drop the unfinished collection "${half}"`, () => target.client.collections(half).delete(), {
        404: () => undefined,
      }).catch(() => undefined);
    }
    throw error;
  } finally {
    await resumeSync(sql);
  }
}

/** Every video into `collection`, REINDEX_BATCH at a time in video id order, renewing the sync pause after each; the count sent. */
async function fillCollection(
  target: TypesenseTarget,
  sql: Sql,
  collection: string,
  aliasTarget: string,
  onProgress?: ReindexOptions['onProgress'],
): Promise<number> {
  const [{ total }] = await sql<[{ total: number }]>`select count(*)::int as total from videos`;
  let documents = 0;
  for (let last = ''; ; ) {
    const page = await documentsAfter(sql, last, REINDEX_BATCH);
    if (page.length === 0) break;
    const failures = await upsertDocuments(target, page, collection);
    if (failures.length > 0) {
      const first = failures[0]!;
      throw new AppError(
        'INTERNAL_ERROR',
        `Typesense refused ${failures.length} of ${page.length} documents (first: ${first.id}: ${first.error}); "${target.alias}" still points at ${aliasTarget}: fix the cause and run npx afterimage reindex again`,
      );
    }
    documents += page.length;
    last = page.at(-1)!.id;
    onProgress?.(documents, Math.max(total, documents));
    await pauseSync(sql);
  }
  return documents;
}

/** A new collection named after this second; a name taken (a reindex in the same second) waits for the next. */
async function createCollection(target: TypesenseTarget): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const name = `${target.alias}_${timestamp(new Date())}`;
    const taken: Record<number, () => boolean> = attempt < 2 ? { 409: () => false } : {};
    const created = await call(
      target,
      `create the collection "${name}"`,
      () =>
        target.client
          .collections()
          .create(collectionSchema(name))
          .then(() => true),
      taken,
    );
    if (created) return name;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
