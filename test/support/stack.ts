import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices, type Services } from '../../core/services/buildServices.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { startTestApi, type TestApi } from './api.ts';
import type { TestDatabase } from './db.ts';
import { readStream } from './sse.ts';

/**
 * API and worker over one test database, as `afterimage start` wires them: one set of services built
 * from the configuration (env), with `overrides` in place of the configured ones (the video sources,
 * say); the configured sources unless given.
 */
export async function startSearchStack(
  db: TestDatabase,
  env: Record<string, string>,
  overrides: Partial<Services> = {},
  clock?: () => Date,
) {
  const log = createLogger((process.env.TEST_LOG as 'debug' | undefined) ?? 'silent');
  const config = loadConfig({ DATA_DIR: '.afterimage-test', DATABASE_URL: db.url, ...env });
  const services = await buildServices(config, { sql: db.sql, log }, overrides);
  // The same services on both sides: both read and write one stenogram store, one archive index.
  const api = await startTestApi(db.sql, { DATABASE_URL: db.url, ...env }, log, services, { clock });
  const worker = await startWorker(api.config, { sql: db.sql, url: db.url, embedded: false, close: async () => {} }, log, services);
  return {
    api,
    worker,
    async close() {
      await worker.stop();
      await api.close();
    },
  };
}

/** A channel search through the API, its stream read to the end: the events, the last one first checked by the caller. */
export async function searchToEnd(api: TestApi, key: string, query: string) {
  const started = await api.call('/api/search', {
    method: 'POST',
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  if (started.status !== 200) throw new Error(`POST /api/search answered ${started.status}: ${JSON.stringify(started.body)}`);
  return (await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 })).events;
}
