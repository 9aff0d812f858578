import type { Queryable } from '../db/database.ts';

/**
 * Where "continue" pages the channel's archive look-ups next: the archive-page crawl already
 * running (joined), else the cursor the latest crawl left. Undefined when there is no further page
 * (or the first pass has not reached the archives yet).
 */
export async function nextArchivePage(sql: Queryable, channelId: string): Promise<{ cursor: string | null } | undefined> {
  const [latest] = await sql<{ status: string; next: string | null; kind: string }[]>`
    select status, next_archive_cursor as next, kind from crawls where channel_id = ${channelId}
    order by (kind = 'archive_page' and status = 'running') desc, coalesce(finished_at, started_at) desc limit 1`;
  const running = latest?.kind === 'archive_page' && latest.status === 'running';
  if (!running && !latest?.next) return undefined;
  return { cursor: latest?.next ?? null };
}
