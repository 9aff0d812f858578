import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import type { WaybackThumbnailFetcher } from '../../core/sources/wayback/thumbnail.ts';
import { keepThumbnailCapture } from '../../core/evidence/keepCapture.ts';
import { keepWaybackThumbnail } from '../../core/videos/waybackThumbnails.ts';
import { defineTask } from '../defineTask.ts';

/**
 * Keeps the thumbnail the Wayback Machine archived of a video it found (job key `thumbnail:<videoId>`).
 * Without the Wayback configured any more, there is nothing to read: the job ends.
 */
export function fetchThumbnailTask(sql: Sql, log: Logger, fetchThumbnail: WaybackThumbnailFetcher | null) {
  return defineTask('fetch_thumbnail', async ({ videoId }, helpers) => {
    if (!fetchThumbnail) return;
    const outcome = await keepWaybackThumbnail(sql, fetchThumbnail, videoId, keepThumbnailCapture, helpers.abortSignal);
    log.debug('wayback thumbnail', { task: 'fetch_thumbnail', videoId, outcome });
  });
}
