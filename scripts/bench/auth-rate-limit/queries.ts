import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Sql } from '../../../core/db/database.ts';
import { drive } from '../lib/load.ts';
import { median, percentile, round } from '../lib/stats.ts';
import { cpuDelta, cpuSnapshot } from '../lib/usage.ts';
import { QUERY_CONCURRENCY, QUERY_ROUNDS, QUERY_SECONDS, QUERY_WARMUP_SECONDS } from './shape.ts';

interface QueryResult {
  id: string;
  label: string;
  concurrency: number;
  operations: number;
  /** median of the rounds */
  operationsPerSecond: number;
  operationsPerSecondByRound: number[];
  latencyMs: { mean: number; p50: number; p99: number };
  cpuUsPerOperation: { node: number; postgres: number | null; machine: number | null };
  walBytesPerOperation: number | null;
  backgroundCores: number | null;
}

/** Cores that other processes of the machine kept busy meanwhile (tests, builds, ...): a disturbance gauge. */
export function background(machineUs: number | null, seconds: number, ...ours: Array<number | null>): number | null {
  if (machineUs === null || ours.some((us) => us === null)) return null;
  return round(Math.max(0, machineUs - ours.reduce<number>((sum, us) => sum + us!, 0)) / (seconds * 1e6), 2);
}

/**
 * How fast this disk makes a write durable: 8 kB written and fdatasync'd in a loop for `seconds`, in
 * DATA_DIR (where the embedded cluster's WAL is). Every synchronous commit waits for one such flush.
 */
export function diskFlush(dataDir: string, seconds = 1): { flushesPerSecond: number; meanMs: number } {
  const file = join(dataDir, `flush-probe-${process.pid}`);
  const fd = openSync(file, 'w');
  const page = Buffer.alloc(8192, 1);
  let flushes = 0;
  const started = performance.now();
  try {
    while (performance.now() - started < seconds * 1000) {
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      flushes += 1;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const elapsed = (performance.now() - started) / 1000;
  return { flushesPerSecond: round(flushes / elapsed, 0)!, meanMs: round((elapsed * 1000) / flushes, 3)! };
}

export async function walPosition(sql: Sql): Promise<string> {
  const [row] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
  return row!.lsn;
}

export async function walBytes(sql: Sql, start: unknown, end: unknown): Promise<number | null> {
  if (typeof start !== 'string' || typeof end !== 'string') return null;
  const [row] = await sql<{ bytes: number }[]>`select pg_wal_lsn_diff(${end}::pg_lsn, ${start}::pg_lsn)::float8 as bytes`;
  return row!.bytes;
}

interface QuerySamples {
  latencies: number[];
  rates: number[];
  seconds: number;
  selfUs: number;
  postgresUs: number | null;
  machineUs: number | null;
  walBytes: number | null;
}

/**
 * Each query for QUERY_ROUNDS rounds of QUERY_SECONDS, the queries taking turns round by round,
 * so that a burst of other work on a shared machine spreads over all of them instead of one.
 */
export async function measureQueries(
  sql: Sql,
  postmaster: number | undefined,
  queries: Array<[string, string, (i: number) => Promise<unknown>]>,
): Promise<QueryResult[]> {
  const samples = queries.map(
    (): QuerySamples => ({ latencies: [], rates: [], seconds: 0, selfUs: 0, postgresUs: 0, machineUs: 0, walBytes: 0 }),
  );
  const add = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);
  for (let round = 0; round < QUERY_ROUNDS; round++) {
    for (const [index, [, , fn]] of queries.entries()) {
      const sample = samples[index]!;
      await drive(fn, { clients: QUERY_CONCURRENCY, seconds: QUERY_WARMUP_SECONDS });
      const before = sample.latencies.length;
      const walStart = await walPosition(sql);
      const start = cpuSnapshot(postmaster);
      const measured = await drive(fn, { clients: QUERY_CONCURRENCY, seconds: QUERY_SECONDS });
      const cpu = cpuDelta(start, cpuSnapshot(postmaster));
      if (measured.errors) throw new Error(`${measured.errors} queries failed: ${[...measured.errorMessages].join('; ')}`);
      sample.latencies.push(...measured.latencies);
      sample.walBytes = add(sample.walBytes, await walBytes(sql, walStart, await walPosition(sql)));
      sample.rates.push((sample.latencies.length - before) / cpu.seconds);
      sample.seconds += cpu.seconds;
      sample.selfUs += cpu.selfUs;
      sample.postgresUs = add(sample.postgresUs, cpu.postgresUs);
      sample.machineUs = add(sample.machineUs, cpu.machineBusyUs);
    }
  }
  return queries.map(([id, label], index) => {
    const sample = samples[index]!;
    const latencies = sample.latencies.sort((a, b) => a - b);
    const n = latencies.length;
    return {
      id,
      label,
      concurrency: QUERY_CONCURRENCY,
      operations: n,
      operationsPerSecond: round(median(sample.rates), 0)!,
      operationsPerSecondByRound: sample.rates.map((rate) => round(rate, 0)!),
      latencyMs: {
        mean: round(latencies.reduce((sum, ms) => sum + ms, 0) / n, 3)!,
        p50: round(percentile(latencies, 50), 3)!,
        p99: round(percentile(latencies, 99), 3)!,
      },
      cpuUsPerOperation: {
        node: round(sample.selfUs / n, 1)!,
        postgres: sample.postgresUs === null ? null : round(sample.postgresUs / n, 1),
        machine: sample.machineUs === null ? null : round(sample.machineUs / n, 1),
      },
      walBytesPerOperation: sample.walBytes === null ? null : round(sample.walBytes / n, 0),
      backgroundCores: background(sample.machineUs, sample.seconds, sample.selfUs, sample.postgresUs),
    };
  });
}
