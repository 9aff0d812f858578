/**
 * A database outage as the fault test (test/fault/db-outage.test.ts) and the db-outage benchmark
 * cause and time it: a signal to the embedded cluster's postmaster, requests until the answer
 * changes, and the cluster started again under the same DATA_DIR.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedLayout, ensureEmbeddedPostgres } from '../../core/db/embedded.ts';
import { createLogger } from '../../core/log.ts';
import { processAlive } from '../../core/processAlive.ts';

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * SIGKILL: the postmaster dies at once (its sessions end as they notice). SIGTERM: smart shutdown,
 * the open sessions go on, new ones are refused. SIGINT: fast shutdown, every session ends.
 */
export function signalPostmaster(dataDir: string, signal: 'SIGKILL' | 'SIGTERM' | 'SIGINT'): number {
  const pid = Number(readFileSync(join(embeddedLayout(dataDir).pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, signal);
  return pid;
}

/** Polls `check` every 20 ms; answers the milliseconds until it held, or throws after `timeoutMs`. */
export async function msUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return Math.round(performance.now() - started);
    } catch (error) {
      last = error;
    }
    if (performance.now() - started > timeoutMs)
      throw new Error(`no ${what} within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(20);
  }
}

/** Starts the cluster again once the old postmaster is gone; its orphaned sessions may hold the shared memory a little longer. */
export async function restartCluster(dataDir: string, oldPid: number): Promise<void> {
  await msUntil(async () => !processAlive(oldPid), 'exit of the old postmaster', 60_000);
  await msUntil(
    () => ensureEmbeddedPostgres(dataDir, createLogger('silent')).then(() => true),
    'restart of the embedded PostgreSQL',
    60_000,
  );
}

export interface Answer {
  status: number;
  retryAfter: string | null;
  code: string | undefined;
  ms: number;
}

/** One GET on a fresh connection; a request that hangs fails after `timeoutMs` instead of holding the caller. */
export async function answerOf(url: string, headers: Record<string, string> = {}, timeoutMs = 10_000): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(url, { headers: { ...headers, Connection: 'close' }, signal: AbortSignal.timeout(timeoutMs) });
  const body = (await response.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    code: body?.error?.code,
    ms: Math.round(performance.now() - started),
  };
}
