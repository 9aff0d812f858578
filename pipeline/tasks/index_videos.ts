import type { Sql } from '../../core/db/database.ts';
import type { TypesenseTarget } from '../../core/fts/typesense/client.ts';
import { searchSyncPaused } from '../../core/fts/typesense/sync.ts';
import { enqueue } from '../../core/jobs/enqueue.ts';
import type { Logger } from '../../core/log.ts';
import { defineTask } from '../defineTask.ts';

const INDEX_BATCH = 1_000;

export interface IndexVideosDeps {
  sql: Sql;
  log: Logger;
  /** null: no TYPESENSE_URL on this worker (Services.typesense). */
  typesense: TypesenseTarget | null;
}

/**
 * Drains search_sync_queue into Typesense, a batch at a time: each batch is taken (skipping ids another
 * job holds), read as the videos are now, upserted, and the ids of deleted videos are deleted, all before
 * the batch's transaction commits, so a Typesense that is down leaves the queue as it was. Documents
 * Typesense refuses go back into the queue and the job fails, so its retry takes them again.
 */
export function indexVideosTask(deps: IndexVideosDeps) {
  return defineTask('index_videos', async () => {
    const log = deps.log.child({ task: 'index_videos' });
    const typesense = deps.typesense;
    if (!typesense) {
      log.warn('TYPESENSE_URL is not set on this worker: queued videos stay queued for a worker that has it');
      return;
    }
    // The Typesense modules (and the client's package) are loaded only with a Typesense, as core/fts/configured.ts does.
    const { deleteDocuments, toDocuments, upsertDocuments } = await import('../../core/fts/typesense/documents.ts');
    for (;;) {
      if (await searchSyncPaused(deps.sql)) {
        log.debug('a reindex is running: the queue waits for it');
        return;
      }
      const batch = await deps.sql.begin(async (tx) => {
        const taken = await tx<{ videoId: string }[]>`
          delete from search_sync_queue where video_id in (
            select video_id from search_sync_queue limit ${INDEX_BATCH} for update skip locked)
          returning video_id as "videoId"`;
        if (taken.length === 0) return undefined;
        const ids = taken.map((row) => row.videoId);
        const documents = await toDocuments(tx, ids);
        const present = new Set(documents.map((document) => document.id));
        const gone = ids.filter((id) => !present.has(id));
        const failures = await upsertDocuments(typesense, documents);
        await deleteDocuments(typesense, gone);
        if (failures.length)
          await tx`insert into search_sync_queue (video_id) select unnest(${failures.map((failure) => failure.id)}::text[]) on conflict do nothing`;
        // The saved queries see what Typesense has just been given: the run a crawl queued may have come before it.
        if (documents.length > failures.length) await enqueue(tx, 'run_saved_queries', {}, { jobKey: 'run_saved_queries' });
        return { upserted: documents.length - failures.length, deleted: gone.length, failures };
      });
      if (!batch) return;
      log.debug('videos indexed', { upserted: batch.upserted, deleted: batch.deleted });
      if (batch.failures.length) {
        for (const failure of batch.failures)
          log.warn('Typesense refused a video document', { videoId: failure.id, reason: failure.error });
        throw new Error(
          `Typesense refused ${batch.failures.length} video documents (first: ${batch.failures[0]!.id}: ${batch.failures[0]!.error}); they are queued again for the retry`,
        );
      }
    }
  });
}
