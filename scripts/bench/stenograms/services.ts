import { readdirSync, readFileSync } from 'node:fs';
import type { Sql } from '../../../core/db/database.ts';
import { type BenchContext, sleep } from '../lib/harness.ts';
import { nodeArgsKnob } from '../lib/knobs.ts';
import { type ServiceProcess, startService } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { WORKER_CONCURRENCY } from './shape.ts';

/**
 * CPU µs so far of each PostgreSQL backend serving `database` (a child of the postmaster whose process
 * title names it), by pid: the share of the server's CPU that is this round's, apart from other
 * databases of a shared cluster and the server's background processes.
 */
export function databaseBackendTimes(postmaster: number | undefined, database: string): Map<number, number> {
  const times = new Map<number, number>();
  if (postmaster === undefined) return times;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== postmaster) continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!title.includes(` ${database} `)) continue;
      times.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10_000); // USER_HZ is 100
    } catch {
      // the process ended meanwhile
    }
  }
  return times;
}

/** µs used between two databaseBackendTimes; a backend started in between counts from zero. */
export function backendDelta(start: Map<number, number>, end: Map<number, number>): number {
  let us = 0;
  for (const [pid, time] of end) us += Math.max(0, time - (start.get(pid) ?? 0));
  return us;
}

/** Opt-in (STENOGRAMS_PG_ACTIVITY=1): what the database's sessions were doing, sampled every 10 ms, by process, state, wait and statement. */
export function activitySampler(sql: Sql | undefined) {
  const counts = new Map<string, number>();
  let sampling = sql !== undefined;
  let samples = 0;
  const loop = (async () => {
    while (sampling && sql) {
      const rows = await sql<{ key: string }[]>`
        select coalesce(nullif(split_part(application_name, ':', 3), ''), 'graphile-worker') || ' | ' || state || ' | ' || coalesce(wait_event_type || '/' || wait_event, 'on CPU') || ' | ' || left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 70) as key
        from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`;
      samples++;
      for (const row of rows) counts.set(row.key, (counts.get(row.key) ?? 0) + 1);
      await sleep(10);
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return {
        samples,
        top: [...counts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 25)
          .map(([key, n]) => ({ key, samples: n })),
      };
    },
  };
}

/** The environment of `afterimage api` and `afterimage worker`: the round's database, a temporary DATA_DIR, no LLM, no other services. */
export const serviceEnv = (dbUrl: string, dataDir: string) => ({
  DATABASE_URL: dbUrl,
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
  STENOGRAM_STORE: 'file',
  LLM_BASE_URL: '',
  TYPESENSE_URL: '',
  YOUTUBE_API_KEY: '',
  WAYBACK_ENABLED: 'false',
});

export async function startApiProcess(ctx: BenchContext, env: Record<string, string>): Promise<ServiceProcess & { base: URL }> {
  const api = await startService('api', env, { nodeArgs: nodeArgsKnob('STENOGRAMS_API_NODE_ARGS') });
  if (!api.url) {
    await api.stop();
    throw new Error('the API logged no url');
  }
  ctx.progress(`API pid ${api.pid} at ${api.url}, ready in ${Math.round(api.readyAt - api.spawnedAt)} ms`);
  return Object.assign(api, { base: new URL(api.url) });
}

/**
 * Samples, every 50 ms, the write transactions (those with an xid) open in other databases of the same
 * PostgreSQL cluster: xids are the cluster's, so such a transaction holds back readEvents' visibility
 * horizon (pg_snapshot_xmin) in this database too. A disturbance gauge for the shared benchmark cluster.
 */
export function clusterWriters(sql: Sql) {
  let sampling = true;
  let samples = 0;
  let withWriter = 0;
  let oldestMs = 0;
  const loop = (async () => {
    while (sampling) {
      const [row] = await sql<{ writers: number; oldestMs: number | null }[]>`
        select count(*)::int as writers, (extract(epoch from max(clock_timestamp() - xact_start)) * 1000)::float8 as "oldestMs"
        from pg_stat_activity where backend_xid is not null and datname is distinct from current_database()`;
      samples++;
      if ((row?.writers ?? 0) > 0) withWriter++;
      oldestMs = Math.max(oldestMs, row?.oldestMs ?? 0);
      await sleep(50);
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return { samples, withWriter, share: round(withWriter / Math.max(1, samples), 2), oldestMs: round(oldestMs, 0) };
    },
  };
}
