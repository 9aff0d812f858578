import type { Task } from 'graphile-worker';
import type { Sql } from '../../core/db/database.ts';

/** Hourly housekeeping: usage buckets no window can reach any more, and heartbeats of long-gone processes. */
export function cleanupTask(sql: Sql): Task {
  return async (_payload, helpers) => {
    const counters = await sql`delete from usage_counters where window_start < now() - interval '2 days'`;
    const heartbeats = await sql`delete from worker_heartbeats where last_seen_at < now() - interval '1 day'`;
    helpers.logger.info('cleanup done', { usageCounters: counters.count, heartbeats: heartbeats.count });
  };
}
