import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { processAlive } from '../processAlive.ts';
import { embeddedPostmasterGone, ensureEmbeddedPostgres } from './embedded.ts';

/** How often a running service looks for the embedded cluster's postmaster. */
const CHECK_EVERY_MS = 1_000;

/**
 * Takes `<DATA_DIR>/restart.lock` for this process (its pid inside), so one service at a time restarts the
 * cluster; a lock whose process is gone is taken over. Answers whether this process holds it.
 */
async function takeRestartLock(file: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(file, 'utf8').catch(() => ''));
      if (holder > 0 && processAlive(holder)) return false;
      await rm(file, { force: true });
    }
  }
  return false;
}

/**
 * A running service's watch over the embedded cluster it uses: when the postmaster is gone (killed,
 * crashed, stopped by hand) it starts the cluster again, so the service serves again without an
 * operator. Answers the function that ends the watch (before the service's own shutdown stops the cluster).
 */
export function keepEmbeddedRunning(dataDir: string, log: Logger): () => Promise<void> {
  const lockFile = join(dataDir, 'restart.lock');
  let restarting: Promise<void> | undefined;
  const restart = async () => {
    if (!(await embeddedPostmasterGone(dataDir))) return;
    if (!(await takeRestartLock(lockFile))) return;
    try {
      // Checked again under the lock: another service may have restarted it meanwhile.
      if (!(await embeddedPostmasterGone(dataDir))) return;
      log.warn('the embedded PostgreSQL is not running (its postmaster is gone): starting it again', { dataDir });
      await ensureEmbeddedPostgres(dataDir, log);
    } finally {
      await rm(lockFile, { force: true });
    }
  };
  const timer = setInterval(() => {
    restarting ??= restart()
      .catch((error: unknown) => log.error('could not restart the embedded PostgreSQL; trying again', { err: error }))
      .finally(() => (restarting = undefined));
  }, CHECK_EVERY_MS).unref();
  return async () => {
    clearInterval(timer);
    await restarting;
  };
}
