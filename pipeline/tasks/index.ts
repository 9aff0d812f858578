import type { TaskList } from 'graphile-worker';
import type { Sql } from '../../core/db/database.ts';
import { cleanupTask } from './cleanup.ts';

export function taskList(sql: Sql): TaskList {
  return { cleanup: cleanupTask(sql) };
}

/**
 * graphile-worker's crontab (UTC): each line runs exactly once across all workers, and `fill`
 * backfills runs missed while no worker was up.
 */
export const crontab = ['0 * * * * cleanup ?fill=1d&max=1'].join('\n');
