import type { Queryable } from '../db/database.ts';
import { STENOGRAM_COLUMNS, STENOGRAM_SOURCE, type StenogramRow } from './metadata.ts';

/** Stenograms per page of the owner's list (api-spec §8). */
export const STENOGRAMS_PER_PAGE = 20;
/** Most video ids GET /api/user/stenograms/video-ids answers (api-spec §8). */
export const STENOGRAM_VIDEO_IDS_CAP = 1000;

/** The owner's stenograms, newest first, a page at a time (filtered by owner in SQL). */
export async function listStenograms(sql: Queryable, ownerId: string, page: number): Promise<{ rows: StenogramRow[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    sql<StenogramRow[]>`
      select ${sql.unsafe(STENOGRAM_COLUMNS)}
      from ${sql.unsafe(STENOGRAM_SOURCE)}
      where g.owner_id = ${ownerId}::uuid
      order by g.requested_at desc, g.id desc
      limit ${STENOGRAMS_PER_PAGE} offset ${(page - 1) * STENOGRAMS_PER_PAGE}`,
    sql<{ total: number }[]>`select count(*)::int as total from stenograms where owner_id = ${ownerId}::uuid`,
  ]);
  return { rows, total: count!.total };
}

/**
 * The video ids of every stenogram the owner has (any state), newest first, at most
 * STENOGRAM_VIDEO_IDS_CAP; those still generating or failed are also listed apart.
 */
export async function stenogramVideoIds(sql: Queryable, ownerId: string) {
  const rows = await sql<{ videoId: string; status: StenogramRow['status'] }[]>`
    select video_id as "videoId", status from stenograms where owner_id = ${ownerId}::uuid
    order by requested_at desc, id desc
    limit ${STENOGRAM_VIDEO_IDS_CAP + 1}`;
  const kept = rows.slice(0, STENOGRAM_VIDEO_IDS_CAP);
  const of = (status: StenogramRow['status']) => kept.filter((row) => row.status === status).map((row) => row.videoId);
  return {
    videoIds: kept.map((row) => row.videoId),
    generating: of('generating'),
    failed: of('failed'),
    capped: rows.length > STENOGRAM_VIDEO_IDS_CAP,
  };
}
