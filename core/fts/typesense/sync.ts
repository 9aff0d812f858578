import type { Queryable, Sql } from '../../db/database.ts';

/** Keeping the index in sync (sql/010_search_sync.sql): the videos triggers queue changes for index_videos. */

/** Turns queueing by the videos triggers on or off; true when that changed the setting. */
export async function setSearchSync(sql: Sql, enabled: boolean): Promise<boolean> {
  const changed = await sql`update search_sync set enabled = ${enabled} where enabled <> ${enabled} returning 1`;
  return changed.count > 0;
}

/** True while a reindex fills a new collection: the queue waits for it. */
export async function searchSyncPaused(sql: Queryable): Promise<boolean> {
  const [row] = await sql<{ paused: boolean }[]>`select coalesce(reindexing_until > now(), false) as paused from search_sync`;
  return row?.paused ?? false;
}

const PAUSE = "interval '10 minutes'";
/** Holds the queue for a while; a reindex renews it after every batch, so a crashed one frees the queue soon. */
export const pauseSync = (sql: Sql) => sql`update search_sync set reindexing_until = now() + ${sql.unsafe(PAUSE)}`;

/** Ends a reindex's pause and wakes the queue, which holds what changed meanwhile. */
export async function resumeSync(sql: Sql): Promise<void> {
  await sql`update search_sync set reindexing_until = null`;
  await sql`select queue_index_videos() from search_sync where enabled`;
}
