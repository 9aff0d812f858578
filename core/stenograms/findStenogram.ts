import type { Queryable } from '../db/database.ts';
import { STENOGRAM_COLUMNS, type StenogramRow } from './metadata.ts';

/** The owner's stenogram of a video. Every read filters by owner in SQL: nobody else's is ever found. */
export async function findStenogram(sql: Queryable, ownerId: string, videoId: string): Promise<StenogramRow | undefined> {
  const [row] = await sql<StenogramRow[]>`
    select ${sql.unsafe(STENOGRAM_COLUMNS)}
    from stenograms g join videos v on v.video_id = g.video_id join channels c on c.channel_id = v.channel_id
    where g.owner_id = ${ownerId}::uuid and g.video_id = ${videoId}`;
  return row;
}

export async function readStenogram(sql: Queryable, stenogramId: string): Promise<StenogramRow | undefined> {
  const [row] = await sql<StenogramRow[]>`
    select ${sql.unsafe(STENOGRAM_COLUMNS)}
    from stenograms g join videos v on v.video_id = g.video_id join channels c on c.channel_id = v.channel_id
    where g.id = ${stenogramId}`;
  return row;
}
