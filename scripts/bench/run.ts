/**
 * `npm run bench [-- <name>...]`: runs the benchmarks beside this file (name.ts, or name/index.ts, exporting
 * `benchmark`), prints the figures held to a target and writes results/<name>.json, data only, with the
 * machine and the commit; what they mean is written by hand in results/SUMMARY.md. Each benchmark gets
 * fresh migrated databases on DATABASE_URL's server or an embedded cluster under .afterimage-bench/.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect, type Sql, withDatabaseName } from '../../core/db/database.ts';
import { embeddedLayout, ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { migrate } from '../../core/db/migrate.ts';
import { createLogger } from '../../core/log.ts';
import { benchDataDir, benchDir, type Benchmark, type BenchOutcome, machineInfo, repoRoot, resultsDir } from './lib/harness.ts';

const log = createLogger('warn');
const runStarted = performance.now();
const say = (line: string) => process.stdout.write(`${line}\n`);
const clock = () => `${((performance.now() - runStarted) / 1000).toFixed(1).padStart(6)}s`;

async function discover(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of (await readdir(benchDir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const index = join(benchDir, entry.name, 'index.ts');
    if (entry.isDirectory() && existsSync(index)) found.set(entry.name, index);
    else if (entry.isFile() && /^(?!run\.ts$).*(?<!\.d)\.ts$/.test(entry.name))
      found.set(entry.name.slice(0, -3), join(benchDir, entry.name));
  }
  return found;
}

let server: Promise<{ url: string; kind: string; version: string }> | undefined;

/** Runs `work` on the maintenance database of the server, started on first use. */
async function asAdmin<T>(work: (admin: Sql) => Promise<T>): Promise<T> {
  server ??= (async () => {
    if (!process.env.DATABASE_URL) say(`${clock()}  starting the embedded PostgreSQL in ${benchDataDir}`);
    const url = process.env.DATABASE_URL ?? (await ensureEmbeddedPostgres(benchDataDir, log));
    const admin = connect(withDatabaseName(url, 'postgres'), { max: 1, role: 'bench-setup' });
    const [row] = await admin<{ version: string }[]>`select current_setting('server_version') as version`.finally(() => admin.end());
    return { url, kind: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded', version: row!.version };
  })();
  const admin = connect(withDatabaseName((await server).url, 'postgres'), { max: 1, role: 'bench-setup' });
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

async function runOne(benchmark: Benchmark): Promise<boolean> {
  const started = performance.now();
  const progress = (message: string) => say(`${clock()}  [${benchmark.name}] ${message}`);
  const created: Array<{ name: string; pools: Sql[] }> = [];
  const freshDatabase = async () => {
    const name = `afterimage_bench_${benchmark.name.replace(/[^a-z0-9]+/gi, '_')}_${randomBytes(4).toString('hex')}`;
    await asAdmin((admin) => admin.unsafe(`create database ${name}`));
    const { url: serverUrl, kind, version } = await server!;
    const entry = { name, pools: [] as Sql[] };
    created.push(entry);
    const url = withDatabaseName(serverUrl, name);
    const migrator = connect(url, { max: 1, role: 'bench-setup' });
    await migrate(migrator, url, log).finally(() => migrator.end());
    progress(`fresh database ${name} on ${kind} PostgreSQL ${version}`);
    return {
      name,
      url,
      server: kind,
      serverVersion: version,
      pool(options: { max: number; role: string; connection?: Record<string, string> }) {
        const sql = connect(url, { max: options.max, role: options.role, statementTimeoutMs: 15_000, settings: options.connection });
        entry.pools.push(sql);
        return sql;
      },
    };
  };
  progress(benchmark.title);
  let outcome: BenchOutcome;
  try {
    outcome = await benchmark.run({ dataDir: benchDataDir, log, database: freshDatabase, progress });
  } catch (error) {
    process.stderr.write(`[${benchmark.name}] failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    outcome = { parameters: {}, results: null, targets: [], ok: false, problems: [String(error).split('\n')[0]!] };
  }
  for (const { name, pools } of created) {
    await Promise.all(pools.map((sql) => sql.end({ timeout: 5 })));
    await asAdmin((admin) => admin.unsafe(`drop database if exists ${name} with (force)`)).catch((error: unknown) =>
      process.stderr.write(`[${benchmark.name}] could not drop ${name}: ${String(error)}\n`),
    );
  }
  const { name, title, description } = benchmark;
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const postgres = server && (await server);
  const database = postgres ? { server: postgres.kind, version: postgres.version } : null;
  const durationSeconds = Math.round((performance.now() - started) / 1000);
  const result = { name, title, description, date: new Date().toISOString(), durationSeconds, commit, machine: machineInfo(), database };
  await writeFile(join(resultsDir, `${name}.json`), `${JSON.stringify({ ...result, ...outcome }, null, 2)}\n`);
  say(`\n${title}${outcome.ok ? '' : `  (FAILED: ${outcome.problems.join('; ')})`}`);
  for (const t of outcome.targets)
    say(`  ${t.figure}: ${t.value ?? '-'} (target ${'atMost' in t ? `≤ ${t.atMost}` : `≥ ${t.atLeast}`}: ${t.met ? 'met' : 'MISSED'})`);
  say(`  all figures: scripts/bench/results/${name}.json\n`);
  return outcome.ok;
}

/** Stops the embedded cluster unless another `npm run bench` still uses it. */
async function stopEmbeddedCluster(): Promise<void> {
  if (!server || process.env.DATABASE_URL || !existsSync(join(embeddedLayout(benchDataDir).pgDir, 'postmaster.pid'))) return;
  const [row] = await asAdmin(
    (admin) => admin<{ others: number }[]>`
      select count(*)::int as others from pg_stat_activity
      where application_name like 'afterimage:%' and split_part(application_name, ':', 2) <> ${String(process.pid)}`,
  );
  if (row!.others === 0) await stopEmbeddedPostgres(benchDataDir, log);
}

async function main(names: string[]): Promise<number> {
  const all = await discover();
  const unknown = names.filter((name) => !all.has(name));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${[...all.keys()].join(', ')}\n`);
    return 2;
  }
  const chosen = names.length ? [...all.keys()].filter((name) => names.includes(name)) : [...all.keys()];
  await mkdir(resultsDir, { recursive: true });
  await mkdir(benchDataDir, { recursive: true });
  const machine = machineInfo();
  say(`${clock()}  benchmarks: ${chosen.join(', ')} — Node ${machine.node}, ${machine.cpuCount} × ${machine.cpuModel}`);
  let failed = 0;
  try {
    for (const name of chosen) {
      // Loaded one at a time, so that one that no longer compiles does not stop the others.
      const module = (await import(pathToFileURL(all.get(name)!).href).catch((error: unknown) => ({ error }))) as {
        benchmark?: Benchmark;
        error?: unknown;
      };
      if (module.benchmark?.name === name && (await runOne(module.benchmark))) continue;
      if (module.benchmark?.name !== name)
        process.stderr.write(`[${name}] could not be loaded: ${String(module.error ?? `no \`benchmark\` named ${name}`)}\n`);
      failed += 1;
    }
  } finally {
    await stopEmbeddedCluster().catch((error: unknown) =>
      process.stderr.write(`could not stop the embedded PostgreSQL: ${String(error)}\n`),
    );
  }
  say(`${clock()}  results in scripts/bench/results/; what they mean: SUMMARY.md${failed ? `; ${failed} benchmark(s) FAILED` : ''}`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2).filter((arg) => arg !== '--')).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
