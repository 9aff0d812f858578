import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import { reconcileStenogramStore } from '../../core/stenograms/reconcileStore.ts';
import type { StenogramStore } from '../../core/stenograms/store.ts';
import { defineTask } from '../defineTask.ts';

/** Hourly: no stenogram file without its row, and no generated row without its file, survives a crash. */
export function reconcileStenogramsTask(sql: Sql, store: StenogramStore, log: Logger) {
  return defineTask('reconcile_stenograms', async () => {
    await reconcileStenogramStore(sql, store, log);
  });
}
