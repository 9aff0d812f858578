import type { Queryable } from '../db/database.ts';
import { STENOGRAM_COLUMNS, STENOGRAM_SOURCE, type StenogramRow } from './metadata.ts';

/** The owner's stenogram of a video. Every read filters by owner in SQL: nobody else's is ever found. */
export async function findStenogram(sql: Queryable, ownerId: string, videoId: string): Promise<StenogramRow | undefined> {
  const [row] = await sql<StenogramRow[]>`
    select ${sql.unsafe(STENOGRAM_COLUMNS)}
    from ${sql.unsafe(STENOGRAM_SOURCE)}
    where g.owner_id = ${ownerId}::uuid and g.video_id = ${videoId}`;
  return row;
}

export async function readStenogram(sql: Queryable, stenogramId: string): Promise<StenogramRow | undefined> {
  const [row] = await sql<StenogramRow[]>`
    select ${sql.unsafe(STENOGRAM_COLUMNS)}
    from ${sql.unsafe(STENOGRAM_SOURCE)}
    where g.id = ${stenogramId}`;
  return row;
}
