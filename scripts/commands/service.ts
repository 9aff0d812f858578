import { bootstrapAdmin, type FirstAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import { cachedApiKeys } from '../../core/accounts/cachedApiKeys.ts';
import { connect, type Sql } from '../../core/db/database.ts';
import { openDatabase } from '../../core/db/openDatabase.ts';
import { databaseLocation } from '../../core/db/databaseLocation.ts';
import { keepEmbeddedRunning } from '../../core/db/keepEmbeddedRunning.ts';
import { registerService } from '../../core/db/runningServices.ts';
import { migrate } from '../../core/db/migrate.ts';
import type { ServerKey } from '../../core/secrets/serverKey.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { warmUpSources } from '../../core/sources/configured.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { startApi } from '../../api/server.ts';
import { startMetricsServer } from '../../api/routes/metrics.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { setup, version } from '../cli.ts';

/**
 * `start` runs the API and the worker in one process; `api` and `worker` run one side each, to
 * scale out. Every process registers as a user of its database and, on the embedded cluster, starts
 * it again should its postmaster die. Every process shuts down the same way: stop taking work, finish
 * what is in flight, then close the database (and the embedded cluster, if no other process uses it).
 */
/** Shows the administrator created on a database without users: its key and sign-in link are shown this once. */
function printFirstAdmin(admin: FirstAdmin, baseUrl: string, site: string): void {
  process.stdout.write(
    [
      '',
      `First run: created the administrator ${admin.email} (Pro, L4).`,
      'Its API key is shown only this once; store it now:',
      '',
      `  ${admin.key}`,
      '',
      `Try it:  curl -H "X-API-Key: ${admin.key}" ${baseUrl}/api/features`,
      '',
      `Sign in on the website with this link; it works once, until ${admin.signInExpiresAt.toISOString().slice(11, 16)} UTC:`,
      '',
      `  ${site}/login/once/${admin.signInToken}`,
      '',
      'Then set a password on /account, or now with:',
      `  afterimage users password --email ${admin.email} --password-stdin`,
      '',
    ].join('\n'),
  );
}

/** What a started service shares with the command that started it (the demo points its webhook with them). */
export interface Serving {
  sql: Sql;
  serverKey: ServerKey;
}

export async function serve(
  sides: { api: boolean; worker: boolean },
  /** firstAdmin: an administrator created before the start (the demo's), shown as the bootstrap shows its own. */
  options: { firstAdmin?: FirstAdmin | undefined } = {},
): Promise<Serving | undefined> {
  const started = Date.now();
  const { config, log } = setup();
  const role = sides.api && sides.worker ? 'start' : sides.api ? 'api' : 'worker';
  // Whatever has started is closed in reverse order, also when a signal comes during start-up.
  const closers: Array<() => Promise<void>> = [];
  let stopping = false;

  const startup = (async () => {
    const db = await openDatabase(config, log, role);
    closers.push(() => db.close());
    const record = await registerService(role, databaseLocation(config), config.archiveDir);
    closers.push(async () => record.remove());
    // Stopped before this process closes the database, so its own last close is not undone.
    if (db.embedded) closers.push(keepEmbeddedRunning(config.dataDir, log));
    if (stopping) return;
    await migrate(db.sql, db.url, log);
    // One set of services for both sides of `start`: one LLM client, one archive index, one store.
    const services = await buildServices(config, { sql: db.sql, log });
    void warmUpSources(services.sources, log);
    if (sides.api && !stopping) {
      const hub = await createEventHub(db.sql, log);
      closers.push(() => hub.close());
      const tiers = cachedTiers(db.sql);
      const apiKeys = await cachedApiKeys(db.sql, { tiers });
      closers.push(() => apiKeys.close());
      const counterSql = connect(db.url, {
        max: Math.max(2, Math.ceil(config.DATABASE_POOL_SIZE / 2)),
        role: `${role}-counters`,
        settings: { synchronous_commit: 'off' },
        log,
      });
      closers.push(() => counterSql.end({ timeout: 5 }));
      const api = await startApi(
        { config, sql: db.sql, counterSql, tiers, apiKeys, log, version, startedAt: new Date(), hub, ...services },
        config.PORT,
        config.HOST,
      );
      closers.push(() => api.close());
      const baseUrl = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${api.port}`;
      const admin = options.firstAdmin ?? (await bootstrapAdmin(db.sql));
      if (admin) printFirstAdmin(admin, baseUrl, config.PUBLIC_URL?.replace(/\/$/, '') ?? baseUrl);
      await record.listening(baseUrl);
      log.info('API listening', { url: baseUrl });
    }
    if (sides.worker && !stopping) {
      const worker = await startWorker(config, db, log, services);
      closers.push(() => worker.stop());
    }
    if (config.METRICS_PORT !== undefined && !stopping) {
      // API processes show the deployment's queue too; a worker only its own work (core/metrics.ts).
      const metrics = await startMetricsServer(
        { sql: db.sql, poolSize: config.DATABASE_POOL_SIZE, queue: sides.api, port: config.METRICS_PORT, host: config.HOST },
        log,
      );
      closers.push(() => metrics.close());
    }
    log.info('afterimage ready', { role, version, ms: Date.now() - started, database: db.embedded ? 'embedded' : 'DATABASE_URL' });
    return { sql: db.sql, serverKey: services.serverKey };
  })();

  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn('second signal: exiting without waiting', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('shutting down', { signal });
    try {
      await startup.catch(() => undefined);
      for (const close of closers.reverse()) await close();
      process.exit(0);
    } catch (error) {
      log.error('shutdown failed', { err: error });
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    return await startup;
  } catch (error) {
    // A failed start-up still releases what it opened (the embedded cluster above all).
    for (const close of closers.reverse()) await close().catch(() => undefined);
    throw error;
  }
}
