import type { Sql } from '../../core/db/database.ts';
import { defineTask } from '../defineTask.ts';

/**
 * Hourly housekeeping: usage buckets no window can reach any more, heartbeats of long-gone
 * processes, search sessions and their events after a week (streams can no longer be resumed; a watchlist's
 * stream stays, its history), and
 * failed look-ups of unknown videos after a week (a new fetch of the id asks the sources again), and
 * kept answers of sources older than EVIDENCE_RETENTION_DAYS when it is set.
 */
export function cleanupTask(sql: Sql, evidenceRetentionDays: number | undefined) {
  return defineTask('cleanup', async (_payload, helpers) => {
    const counters = await sql`delete from usage_counters where window_start < now() - interval '2 days'`;
    const heartbeats = await sql`delete from worker_heartbeats where last_seen_at < now() - interval '1 day'`;
    const sessions = await sql`delete from search_sessions where created_at < now() - interval '7 days'`;
    // A watchlist's stream is its change history (listed, fed), kept as long as the watchlist.
    const events = await sql`delete from events where created_at < now() - interval '7 days' and stream not like 'watchlist:%'`;
    const lookups = await sql`delete from video_lookups where state = 'failed' and checked_at < now() - interval '7 days'`;
    const evidence = evidenceRetentionDays
      ? await sql`delete from evidence_observations where recorded_at < now() - make_interval(days => ${evidenceRetentionDays})`
      : { count: 0 };
    helpers.logger.info('cleanup done', {
      usageCounters: counters.count,
      heartbeats: heartbeats.count,
      sessions: sessions.count,
      events: events.count,
      failedLookups: lookups.count,
      evidence: evidence.count,
    });
  });
}
