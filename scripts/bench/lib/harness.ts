import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../../../core/db/database.ts';
import type { Logger } from '../../../core/log.ts';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
export const benchDir = join(repoRoot, 'scripts', 'bench');
export const resultsDir = join(benchDir, 'results');
/** The benchmarks' own DATA_DIR: its embedded cluster, and the cold-start runs' clusters below it. */
export const benchDataDir = join(repoRoot, '.afterimage-bench');

export const packageVersion: string = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;

/** A database created for one benchmark and migrated with core/db/migrate.ts; dropped afterwards. */
export interface BenchDatabase {
  name: string;
  /** Connection URL of the fresh database (may hold a password: never print it). */
  url: string;
  /** 'embedded' or 'DATABASE_URL' */
  server: string;
  /** `select version()` of the server. */
  serverVersion: string;
  /** A pool on the fresh database, like the service's (`connect` from core/db/database.ts). */
  pool(options: { max: number; role: string; connection?: Record<string, string> }): Sql;
}

export interface BenchContext {
  /** The benchmarks' DATA_DIR (the harness's embedded cluster lives in it, unless DATABASE_URL is set). */
  dataDir: string;
  /** Warnings and errors of the code under test; info lines are dropped. */
  log: Logger;
  /** Creates and migrates a fresh database for this benchmark (dropped when the benchmark ends). */
  database(): Promise<BenchDatabase>;
  /** One progress line on stdout, prefixed with the benchmark's name and the elapsed time. */
  progress(message: string): void;
}

/** A measured figure held to a target: `atMost` for times and sizes, `atLeast` for rates. */
export interface Target {
  figure: string;
  value: number | null;
  atMost?: number;
  atLeast?: number;
  met: boolean;
}

/** `figure` against its bound; a figure that could not be measured (null) misses it. */
export function target(figure: string, value: number | null | undefined, bound: { atMost: number } | { atLeast: number }): Target {
  const met = value !== null && value !== undefined && ('atMost' in bound ? value <= bound.atMost : value >= bound.atLeast);
  return { figure, value: value ?? null, ...bound, met };
}

/** What a benchmark hands back; run.ts adds the date, machine and timings, and writes it out as JSON. */
export interface BenchOutcome {
  /** Everything that decides the numbers: durations, connections, pool size, ... */
  parameters: Record<string, unknown>;
  /** The measured figures, machine-readable. */
  results: unknown;
  /** The figures the benchmark holds to a target (printed, and in the JSON); an unmet one is not a failure. */
  targets: Target[];
  /** False when a check failed (non-2xx responses, a start that never answered, ...). */
  ok: boolean;
  /** What went wrong when ok is false. */
  problems: string[];
}

export interface Benchmark {
  name: string;
  title: string;
  description: string;
  run(ctx: BenchContext): Promise<BenchOutcome>;
}

export interface MachineInfo {
  node: string;
  platform: string;
  arch: string;
  cpuCount: number;
  cpuModel: string;
  memoryGiB: number;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpuCount: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  };
}

export { withDatabaseName } from '../../../core/db/database.ts';

export const uniqueDatabaseName = (benchmark: string) =>
  `afterimage_bench_${benchmark.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A plain-text table for the console: numbers right-aligned. */
export function textTable(columns: string[], rows: Array<Array<string | number | null>>): string {
  const cells = rows.map((row) => row.map((cell) => (cell === null ? '-' : String(cell))));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((row) => (row[index] ?? '').length)));
  const numeric = columns.map((_, index) => rows.every((row) => row[index] === null || typeof row[index] === 'number'));
  const line = (values: string[]) =>
    values
      .map((value, index) => (numeric[index] && index > 0 ? value.padStart(widths[index]!) : value.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
