import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import { reconcileStenogramStore } from '../../core/stenograms/reconcileStore.ts';
import type { StenogramStore } from '../../core/stenograms/store.ts';
import { defineTask } from '../defineTask.ts';

/** Hourly: generated rows without their file are marked (never deleted); files no row refers to are removed after several runs. */
export function reconcileStenogramsTask(sql: Sql, store: StenogramStore, log: Logger) {
  return defineTask('reconcile_stenograms', async () => {
    await reconcileStenogramStore(sql, store, log);
  });
}
