import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import { fanOutChanges } from '../../core/watchlists/fanOut.ts';
import { defineTask } from '../defineTask.ts';

/** Fans the change log out to the watchlists that watch each change (core/watchlists/fanOut.ts), queued by the changes trigger. */
export function fanOutChangesTask(sql: Sql, log: Logger) {
  return defineTask('fan_out_changes', async () => {
    const done = await fanOutChanges(sql);
    if (done.changes) log.debug('changes fanned out', { task: 'fan_out_changes', ...done });
  });
}
