import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import { linkReuploads } from '../../core/status/linkReuploads.ts';
import { VIDEO_ID } from '../../core/youtube/channelQuery.ts';

const payloadSchema = z.object({ videoIds: z.array(z.string().regex(VIDEO_ID)).min(1).max(500) });

/** Looks for the re-uploads of gone videos (queued when a deletion is confirmed and at each recheck of a gone video). */
export function linkReuploadsTask(sql: Sql, log: Logger): Task {
  return async (rawPayload) => {
    const { videoIds } = payloadSchema.parse(rawPayload);
    const linked = await sql.begin((tx) => linkReuploads(tx, videoIds));
    for (const link of linked) log.info('re-upload linked', { task: 'link_reuploads', ...link });
  };
}
