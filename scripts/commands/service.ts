import { bootstrapAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import { describeConfig } from '../../core/config.ts';
import { openDatabase } from '../../core/db/database.ts';
import { migrate } from '../../core/db/migrate.ts';
import { configuredSources } from '../../core/sources/configured.ts';
import { cachedTiers } from '../../core/tiers/loadTiers.ts';
import { startApi } from '../../api/server.ts';
import { createEventHub } from '../../api/sse/hub.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { output, parseOptions, setup, version, withDatabase } from '../cli.ts';

/**
 * `start` runs the API and the worker in one process; `api` and `worker` run one side each, to
 * scale out. Every process shuts down the same way: stop taking work, finish what is in flight, then
 * close the database (and the embedded cluster, if no other process still uses it).
 */
export async function serve(sides: { api: boolean; worker: boolean }): Promise<void> {
  const started = Date.now();
  const { config, log } = setup();
  const role = sides.api && sides.worker ? 'start' : sides.api ? 'api' : 'worker';
  const db = await openDatabase(config, log, role);
  await migrate(db.sql, db.url, log);

  const sources = configuredSources(config);
  const hub = sides.api ? await createEventHub(db.sql, log) : undefined;
  const api = hub
    ? await startApi({ config, sql: db.sql, tiers: cachedTiers(db.sql), log, version, startedAt: new Date(), hub, sources }, config.PORT, config.HOST)
    : undefined;
  const worker = sides.worker ? await startWorker(config, db, log, sources) : undefined;
  const baseUrl = api ? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${api.port}` : undefined;
  log.info('afterimage ready', { role, version, ms: Date.now() - started, url: baseUrl, database: db.embedded ? 'embedded' : 'DATABASE_URL' });

  if (api) {
    const admin = await bootstrapAdmin(db.sql);
    if (admin) {
      process.stdout.write(
        [
          '',
          'First run: created the administrator admin@afterimage.localhost (Pro, L4).',
          'Its API key is shown only this once; store it now:',
          '',
          `  ${admin.key}`,
          '',
          `Try it:  curl -H "X-API-Key: ${admin.key}" ${baseUrl}/api/features`,
          '',
        ].join('\n'),
      );
    }
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn('second signal: exiting without waiting', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('shutting down', { signal });
    try {
      await api?.close();
      await hub?.close();
      await worker?.stop();
      await db.close();
      process.exit(0);
    } catch (error) {
      log.error('shutdown failed', { err: error });
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

export async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, {});
  const result = await withDatabase((db, log) => migrate(db.sql, db.url, log), { migrate: false });
  output(values.json, result, () => (result.applied.length ? `applied ${result.applied.join(', ')}` : 'database is up to date'));
}

export function configCommand(args: string[]): void {
  const { values } = parseOptions(args, {});
  const { config } = setup();
  const described = describeConfig(config);
  output(values.json, described, () => Object.entries(described).map(([key, value]) => `${key}=${value ?? ''}`).join('\n'));
}
