import type { Sql } from '../db/database.ts';
import { generationStream } from '../generations/lifecycle.ts';
import { stenogramGeneration } from './stenogramGeneration.ts';
import type { StenogramStore } from './store.ts';

/**
 * Deletes the owner's stenogram for good: the row and its events (their payloads hold the text)
 * in one transaction, then the file. A crash between the two leaves a file without a row, which
 * reconcile_stenograms removes. Answers whether there was one.
 */
export async function deleteStenogram(sql: Sql, store: StenogramStore, ownerId: string, videoId: string): Promise<boolean> {
  const deleted = await sql.begin(async (tx) => {
    const [row] = await tx<
      { id: string }[]
    >`delete from stenograms where owner_id = ${ownerId}::uuid and video_id = ${videoId} returning id::text as id`;
    if (row) await tx`delete from events where stream = ${generationStream(stenogramGeneration, row.id)}`;
    return Boolean(row);
  });
  if (deleted) await store.delete(ownerId, videoId);
  return deleted;
}
