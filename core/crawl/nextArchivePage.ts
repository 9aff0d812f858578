import type { Queryable } from '../db/database.ts';

/** What "continue" loads: the archive-page crawl of the next page, or the full crawl that has not reached the archives yet (joined). */
type ArchivePage = { kind: 'archive_page'; archiveCursor: string | null } | { kind: 'full' };

/**
 * Where "continue" pages the channel's archive look-ups next: the archive-page crawl already
 * running (joined), else the cursor the latest crawl left ('' when its look-ups failed before their
 * first page: they start again), else the full crawl still running towards the archives (joined).
 * Undefined when there is no further page.
 */
export async function nextArchivePage(sql: Queryable, channelId: string): Promise<ArchivePage | undefined> {
  const [latest] = await sql<{ status: string; next: string | null; kind: 'full' | 'archive_page' }[]>`
    select status, next_archive_cursor as next, kind from crawls where channel_id = ${channelId}
    order by (kind = 'archive_page' and status = 'running') desc, coalesce(finished_at, started_at) desc limit 1`;
  if (!latest) return undefined;
  if (latest.kind === 'archive_page' && latest.status === 'running') return { kind: 'archive_page', archiveCursor: null };
  if (latest.next !== null) return { kind: 'archive_page', archiveCursor: latest.next };
  if (latest.kind === 'full' && latest.status === 'running') return { kind: 'full' };
  return undefined;
}
