import type { Queryable } from '../db/database.ts';

/** Videos whose next status check is due now and not yet queued: a range of the `video_checks_due` index. */
export async function checksDue(sql: Queryable): Promise<number> {
  const [row] = await sql<{ due: number }[]>`select count(*)::int as due from video_checks where next_check_at <= now()`;
  return row!.due;
}
