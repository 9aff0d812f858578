import type { Logger } from '../log.ts';
import { embeddedPostmasterGone, ensureEmbeddedPostgres } from './embedded.ts';

/** How often a running service looks for the embedded cluster's postmaster. */
const CHECK_EVERY_MS = 1_000;

/**
 * A running service's watch over the embedded cluster it uses: when the postmaster is gone (killed,
 * crashed, stopped by hand) it starts the cluster again, so the service serves again without an
 * operator. Several services may notice at once; the start lock in `ensureEmbeddedPostgres` lets one
 * start it. Answers the function that ends the watch (before the service's own shutdown stops the cluster).
 */
export function keepEmbeddedRunning(dataDir: string, log: Logger): () => Promise<void> {
  let restarting: Promise<void> | undefined;
  const restart = async () => {
    if (!(await embeddedPostmasterGone(dataDir))) return;
    log.warn('the embedded PostgreSQL is not running (its postmaster is gone): starting it again', { dataDir });
    await ensureEmbeddedPostgres(dataDir, log);
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
