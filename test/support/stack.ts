import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { activeArchiveRoots } from '../../core/archives/listArchiveRoots.ts';
import { configuredSources } from '../../core/sources/configured.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { startTestApi, type TestApi } from './api.ts';
import type { TestDatabase } from './db.ts';
import { readStream } from './sse.ts';

/**
 * API and worker over one test database, as `afterimage start` wires them: the sources come from
 * the configuration (env) unless given.
 */
export async function startSearchStack(db: TestDatabase, env: Record<string, string>, sources?: VideoSource[], clock?: () => Date) {
  const log = createLogger((process.env.TEST_LOG as 'debug' | undefined) ?? 'silent');
  const config = loadConfig({ DATABASE_URL: db.url, ...env });
  const used = sources ?? configuredSources(config, () => activeArchiveRoots(db.sql));
  const api = await startTestApi(db.sql, env, log, used, clock);
  // The API's configuration (its DATA_DIR too): both read and write the same stenogram store.
  const worker = await startWorker(api.config, { sql: db.sql, url: db.url, embedded: false, close: async () => {} }, log, used);
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
