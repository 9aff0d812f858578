import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import { linkReuploads } from '../../core/status/linkReuploads.ts';
import { defineTask } from '../defineTask.ts';

/** Looks for the re-uploads of gone videos (queued when a deletion is confirmed and at each recheck of a gone video). */
export function linkReuploadsTask(sql: Sql, log: Logger) {
  return defineTask('link_reuploads', async ({ videoIds }) => {
    const linked = await sql.begin((tx) => linkReuploads(tx, videoIds));
    for (const link of linked) log.info('re-upload linked', { task: 'link_reuploads', ...link });
  });
}
