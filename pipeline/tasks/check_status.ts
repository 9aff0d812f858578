import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import { statusChecks } from '../../core/metrics.ts';
import type { StatusProbe } from '../../core/status/probes.ts';
import { recordObservations, type StatusSchedule } from '../../core/status/recordObservations.ts';
import { defineTask } from '../defineTask.ts';

export interface CheckStatusDeps {
  sql: Sql;
  log: Logger;
  /** null: no probe configured (Services.statusProbe). */
  statusProbe: StatusProbe | null;
  statusSchedule: StatusSchedule;
}

/**
 * Probes a batch of videos and records what the probes saw (see recordObservations). Without a
 * configured probe nothing can be verified: the videos keep their status and come up again after
 * the recheck window.
 */
export function checkStatusTask(deps: CheckStatusDeps) {
  return defineTask('check_status', async ({ videoIds }, helpers) => {
    if (!deps.statusProbe) {
      await deps.sql`update video_checks set next_check_at = now() + make_interval(days => ${deps.statusSchedule.recheckDays}) where video_id = any(${videoIds})`;
      return;
    }
    const observations = await deps.statusProbe(videoIds, helpers.abortSignal);
    const { changes, suspected } = await deps.sql.begin((tx) => recordObservations(tx, observations, deps.statusSchedule));
    for (const observation of observations) statusChecks.inc({ outcome: observation.outcome });
    const transient = observations.filter((observation) => observation.outcome === 'transient').length;
    if (changes.length || suspected || transient) {
      deps.log.info('status checked', { task: 'check_status', videos: videoIds.length, changed: changes.length, suspected, transient });
    }
  });
}
