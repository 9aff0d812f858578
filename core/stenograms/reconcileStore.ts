import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import { stenogramStream } from './stenogramEvents.ts';
import type { StenogramStore } from './store.ts';

/** Younger files and rows are left alone: a generation writes its file a moment before its row says generated. */
const GRACE_MINUTES = 10;

/**
 * After a crash between a row and its file: removes files that no generated or generating row
 * owns, and generated rows whose file is gone (with their events), so neither survives. Only what
 * is older than GRACE_MINUTES counts, so generations and deletions in flight are never touched.
 */
export async function reconcileStenogramStore(sql: Sql, store: StenogramStore, log: Logger): Promise<{ orphanFiles: number; rowsWithoutFile: number }> {
  const [clock] = await sql<{ cutoff: Date }[]>`select now() - make_interval(mins => ${GRACE_MINUTES}) as cutoff`;
  const cutoff = clock!.cutoff;
  const stored = new Set<string>();
  let orphanFiles = 0;
  for await (const document of store.list()) {
    const key = `${document.userId}/${document.videoId}`;
    stored.add(key);
    if (document.modifiedAt > cutoff) continue;
    const [owner] = await sql`select 1 from stenograms where owner_id = ${document.userId}::uuid and video_id = ${document.videoId} and status in ('generated', 'generating')`;
    if (owner) continue;
    await store.delete(document.userId, document.videoId);
    orphanFiles++;
  }
  const generated = await sql<{ id: string; ownerId: string; videoId: string }[]>`
    select id::text as id, owner_id::text as "ownerId", video_id as "videoId" from stenograms where status = 'generated' and generated_at < ${cutoff}`;
  const missing = generated.filter((row) => !stored.has(`${row.ownerId}/${row.videoId}`));
  for (const row of missing) {
    await sql.begin(async (tx) => {
      await tx`delete from stenograms where id = ${row.id} and status = 'generated'`;
      await tx`delete from events where stream = ${stenogramStream(row.id)}`;
    });
  }
  if (orphanFiles || missing.length) log.warn('stenogram store reconciled', { orphanFiles, rowsWithoutFile: missing.length, store: store.location });
  return { orphanFiles, rowsWithoutFile: missing.length };
}
