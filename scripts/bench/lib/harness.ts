import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../../../core/db/database.ts';
import type { Logger } from '../../../core/log.ts';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
export const benchDir = join(repoRoot, 'scripts', 'bench');
export const resultsDir = join(benchDir, 'results');
/** The benchmarks' own DATA_DIR, never the service's: the embedded cluster and the services' scratch folders. */
export const benchDataDir = join(repoRoot, '.afterimage-bench');

export const packageVersion: string = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;

/** A fresh database for one benchmark, migrated, dropped when it ends. */
interface BenchDatabase {
  name: string;
  /** May hold a password: never print it. */
  url: string;
  /** 'embedded' or 'DATABASE_URL' */
  server: string;
  serverVersion: string;
  /** A pool like the service's; `connection` adds session settings (e.g. synchronous_commit). */
  pool(options: { max: number; role: string; connection?: Record<string, string> }): Sql;
}

export interface BenchContext {
  dataDir: string;
  /** Warnings and errors of the code under test. */
  log: Logger;
  database(): Promise<BenchDatabase>;
  /** One line on stdout, with the benchmark's name and the elapsed time. */
  progress(message: string): void;
}

/** A figure held to a bound: `atMost` for times and sizes, `atLeast` for rates. */
export interface Target {
  figure: string;
  value: number | null;
  atMost?: number;
  atLeast?: number;
  met: boolean;
}

/** A figure that could not be measured (null) misses its bound. */
export function target(figure: string, value: number | null | undefined, bound: { atMost: number } | { atLeast: number }): Target {
  const met = value !== null && value !== undefined && ('atMost' in bound ? value <= bound.atMost : value >= bound.atLeast);
  return { figure, value: value ?? null, ...bound, met };
}

/** What a benchmark hands back; run.ts adds the date, machine and commit. A missed target is not a failure; a problem is. */
export interface BenchOutcome {
  parameters: Record<string, unknown>;
  results: unknown;
  targets: Target[];
  ok: boolean;
  problems: string[];
}

export interface Benchmark {
  name: string;
  title: string;
  description: string;
  run(ctx: BenchContext): Promise<BenchOutcome>;
}

export function machineInfo() {
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpuCount: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  };
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
