import type { Sql } from '../../core/db/database.ts';
import { scheduleStatusChecks } from '../../core/status/scheduleChecks.ts';
import { defineTask } from '../defineTask.ts';

/**
 * Crontab, every minute: queues the videos whose next check is due, at most `perMinute` of them
 * (STATUS_CHECKS_PER_MINUTE), so a backlog (the first run over a big archive) drains at a steady pace.
 */
export function scheduleStatusChecksTask(sql: Sql, perMinute: number) {
  return defineTask('schedule_status_checks', async (_payload, helpers) => {
    const { videos, jobs } = await sql.begin((tx) => scheduleStatusChecks(tx, { limit: perMinute }));
    if (videos) helpers.logger.info('status checks queued', { videos, jobs });
  });
}
