import { lookup } from 'node:dns/promises';
import { bootstrapAdmin, type FirstAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import { ConfigError, type Config } from '../../core/config.ts';
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
import { startMetricsServer } from '../../api/routes/metrics.ts';
import { commandLogger, parseOptions, setup, version } from '../cli.ts';
import { chooseDatabase, dataDirOption } from '../serviceDatabase.ts';

/**
 * `start` runs the API and the worker in one process; `api` and `worker` run one side each, to
 * scale out. Every process registers as a user of its database and, on the embedded cluster, starts
 * it again should its postmaster die. Every process shuts down the same way: stop taking work, finish
 * what is in flight, then close the database (and the embedded cluster, if no other process uses it).
 */
/**
 * Shows the administrator created on a database without users: its key and sign-in link are shown
 * this once, between rules of their own so they stand out among log lines. The key keeps a line to
 * itself (indented), where scripts find it.
 */
function printFirstAdmin(admin: FirstAdmin, baseUrl: string, site: string): void {
  const lines = [
    `First run: created the administrator ${admin.email} (Pro, L4).`,
    'Its API key is shown only this once; store it now:',
    '',
    `    ${admin.key}`,
    '',
    `Try it:  curl -H "X-API-Key: ${admin.key}" ${baseUrl}/api/features`,
    '',
    `Sign in on the website with this link; it works once, until ${admin.signInExpiresAt.toISOString().slice(11, 16)} UTC:`,
    '',
    `    ${site}/login/once/${admin.signInToken}`,
    '',
    'Then set a password on /account, or now with:',
    `    npx afterimage users password --email ${admin.email} --password-stdin`,
  ];
  const rule = '═'.repeat(Math.min(78, Math.max(...lines.map((line) => line.length)) + 4));
  process.stdout.write(['', rule, ...lines.map((line) => (line ? `  ${line}` : '')), rule, '', ''].join('\n'));
}

const USAGE = {
  start: `usage: npx afterimage start [--data-dir DIR]   (what npm start runs)
runs the API and the worker in one process`,
  api: `usage: npx afterimage api [--data-dir DIR]
runs the HTTP API only (run several behind a load balancer; npx afterimage migrate once per release first)`,
  worker: `usage: npx afterimage worker [--data-dir DIR]
runs the job worker only (run as many as the queue needs)`,
};
const SERVICE_USAGE = `The database: the embedded PostgreSQL in --data-dir DIR or DATA_DIR (default ./.afterimage), or DATABASE_URL.
Every other setting comes from the environment (README.md; npx afterimage config shows this shell's). On a database
without users the first start creates an administrator and prints its API key and a sign-in link once.`;

/** `afterimage start`, `api` or `worker`: the options are read (and --help answered) before anything starts. */
export async function serviceCommand(role: keyof typeof USAGE, args: string[]): Promise<void> {
  const { values } = parseOptions(args, dataDirOption, { usage: `${USAGE[role]}\n${SERVICE_USAGE}` });
  const config = values['data-dir'] === undefined ? undefined : (await chooseDatabase(values['data-dir'])).config;
  await serve({ api: role !== 'worker', worker: role !== 'api' }, { config });
}

/** Fails fast, naming HOST, when it is neither an address nor a name that resolves (listen would only say getaddrinfo ENOTFOUND). */
async function checkHost(config: Config): Promise<void> {
  try {
    await lookup(config.HOST);
  } catch (error) {
    throw new ConfigError([
      `HOST: ${JSON.stringify(config.HOST)} is not an address of this machine nor a name that resolves (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); expected e.g. 127.0.0.1, or 0.0.0.0 to accept remote clients`,
    ]);
  }
}

/** What a started service shares with the command that started it (the demo points its webhook with them). */
export interface Serving {
  sql: Sql;
  serverKey: ServerKey;
}

export async function serve(
  sides: { api: boolean; worker: boolean },
  /**
   * firstAdmin: an administrator created before the start (the demo's), shown as the bootstrap shows its own;
   * config: the one --data-dir gave, else the environment's.
   */
  options: { firstAdmin?: FirstAdmin | undefined; config?: Config | undefined } = {},
): Promise<Serving | undefined> {
  const started = Date.now();
  const { config, log } = options.config ? { config: options.config, log: commandLogger(options.config) } : setup();
  if (sides.api) await checkHost(config);
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
    // Each side's modules (the routes and pages, the tasks) are loaded by the processes that run it only.
    if (sides.api && !stopping) {
      const [{ createEventHub }, { startApi }] = await Promise.all([import('../../api/sse/hub.ts'), import('../../api/server.ts')]);
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
      const { startWorker } = await import('../../pipeline/worker.ts');
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
