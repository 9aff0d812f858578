/**
 * `npm run bench [-- <name>...]`: runs the benchmarks of scripts/bench/ (every *.ts file beside this
 * one, or folder with an index.ts, exporting `benchmark`), prints the figures each holds to a target and
 * writes scripts/bench/results/<name>.json: data only. What the figures mean is written by hand in
 * scripts/bench/results/SUMMARY.md.
 *
 * Databases: PostgreSQL from DATABASE_URL when set, else an embedded cluster under
 * .afterimage-bench/ (its own DATA_DIR, never the service's); each benchmark gets a fresh database,
 * migrated with core/db/migrate.ts and dropped afterwards.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect, type Sql } from '../../core/db/database.ts';
import { embeddedLayout, ensureEmbeddedPostgres, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { migrate } from '../../core/db/migrate.ts';
import { createLogger } from '../../core/log.ts';
import {
  type BenchContext,
  type BenchDatabase,
  benchDataDir,
  benchDir,
  type Benchmark,
  type BenchOutcome,
  machineInfo,
  type MachineInfo,
  resultsDir,
  type Target,
  textTable,
  uniqueDatabaseName,
  withDatabaseName,
} from './lib/harness.ts';

interface ResultFile {
  name: string;
  title: string;
  description: string;
  date: string;
  durationSeconds: number;
  ok: boolean;
  problems: string[];
  machine: MachineInfo;
  database: { server: string; version: string } | null;
  parameters: Record<string, unknown>;
  results: unknown;
  targets: Target[];
}

const log = createLogger('warn');
const runStarted = performance.now();
const say = (line: string) => process.stdout.write(`${line}\n`);
const clock = () => `${((performance.now() - runStarted) / 1000).toFixed(1).padStart(6)}s`;

/** Where each benchmark beside this file lives, by name: a file (name.ts) or a folder (name/index.ts). */
async function discover(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(benchDir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && entry.name !== 'run.ts')
      found.set(basename(entry.name, '.ts'), join(benchDir, entry.name));
    else if (entry.isDirectory() && existsSync(join(benchDir, entry.name, 'index.ts')))
      found.set(entry.name, join(benchDir, entry.name, 'index.ts'));
  }
  return new Map([...found].sort(([a], [b]) => a.localeCompare(b)));
}

async function load(name: string, file: string): Promise<Benchmark> {
  const module = (await import(pathToFileURL(file).href)) as { benchmark?: Benchmark };
  if (!module.benchmark) throw new Error(`${file} exports no \`benchmark\``);
  if (module.benchmark.name !== name) throw new Error(`${file} names its benchmark "${module.benchmark.name}"; name it "${name}"`);
  return module.benchmark;
}

/** The PostgreSQL server the benchmarks' databases are created on; started on first use. */
let server: Promise<{ url: string; kind: string; version: string }> | undefined;
let usedEmbedded = false;

function postgresServer() {
  server ??= (async () => {
    const external = process.env.DATABASE_URL;
    if (!external) {
      say(`${clock()}  starting the embedded PostgreSQL in ${benchDataDir}`);
      usedEmbedded = true;
    }
    const url = external ?? (await ensureEmbeddedPostgres(benchDataDir, log));
    const admin = connect(withDatabaseName(url, 'postgres'), { max: 1, role: 'bench-setup' });
    try {
      const [row] = await admin<{ version: string }[]>`select current_setting('server_version') as version`;
      return { url, kind: external ? 'DATABASE_URL' : 'embedded', version: row!.version };
    } finally {
      await admin.end();
    }
  })();
  return server;
}

/** A benchmark's databases, created on demand and dropped with their pools when it ends. */
function databaseScope(benchmark: string, progress: (message: string) => void) {
  const created: Array<{ name: string; pools: Sql[] }> = [];
  const info: { server: string; version: string }[] = [];
  return {
    info,
    async database(): Promise<BenchDatabase> {
      const { url: serverUrl, kind, version } = await postgresServer();
      const name = uniqueDatabaseName(benchmark);
      const admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'bench-setup' });
      try {
        await admin.unsafe(`create database ${name}`);
      } finally {
        await admin.end();
      }
      const entry = { name, pools: [] as Sql[] };
      created.push(entry);
      const url = withDatabaseName(serverUrl, name);
      const migrator = connect(url, { max: 1, role: 'bench-setup' });
      const started = performance.now();
      try {
        const { applied } = await migrate(migrator, url, log);
        progress(
          `fresh database ${name} on ${kind} PostgreSQL ${version}, ${applied.length} migrations in ${Math.round(performance.now() - started)} ms`,
        );
      } finally {
        await migrator.end();
      }
      info.push({ server: kind, version });
      return {
        name,
        url,
        server: kind,
        serverVersion: version,
        pool(options) {
          const sql = options.connection
            ? connectWith(url, options)
            : connect(url, { max: options.max, role: options.role, statementTimeoutMs: 15_000 });
          entry.pools.push(sql);
          return sql;
        },
      };
    },
    async dropAll() {
      if (created.length === 0) return;
      const { url: serverUrl } = await postgresServer();
      const admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'bench-setup' });
      try {
        for (const { name, pools } of created) {
          await Promise.all(pools.map((sql) => sql.end({ timeout: 5 })));
          await admin.unsafe(`drop database if exists ${name} with (force)`);
        }
      } finally {
        await admin.end();
      }
    },
  };
}

/** `connect` with extra session settings (e.g. synchronous_commit) for what-if comparisons. */
function connectWith(url: string, options: { max: number; role: string; connection?: Record<string, string> }): Sql {
  // postgres.js sends URL query parameters it does not know as startup parameters (session settings).
  const parsed = new URL(url);
  for (const [setting, value] of Object.entries(options.connection ?? {})) parsed.searchParams.set(setting, value);
  return connect(parsed.toString(), { max: options.max, role: options.role, statementTimeoutMs: 15_000 });
}

/** Stops the benchmarks' embedded cluster unless another process (a second `npm run bench`) still uses it. */
async function stopEmbeddedCluster(): Promise<void> {
  if (!existsSync(join(embeddedLayout(benchDataDir).pgDir, 'postmaster.pid'))) return;
  const { url } = await postgresServer();
  const admin = connect(withDatabaseName(url, 'postgres'), { max: 1, role: 'bench-setup' });
  let others = 0;
  try {
    const [row] = await admin<{ others: number }[]>`
      select count(*)::int as others from pg_stat_activity
      where application_name like 'afterimage:%' and split_part(application_name, ':', 2) <> ${String(process.pid)}`;
    others = row?.others ?? 0;
  } finally {
    await admin.end();
  }
  if (others === 0) await stopEmbeddedPostgres(benchDataDir, log);
}

async function writeAtomically(file: string, content: string): Promise<void> {
  await writeFile(`${file}.tmp`, content);
  await rename(`${file}.tmp`, file);
}

async function runOne(benchmark: Benchmark): Promise<boolean> {
  const started = performance.now();
  const progress = (message: string) => say(`${clock()}  [${benchmark.name}] ${message}`);
  const scope = databaseScope(benchmark.name, progress);
  const ctx: BenchContext = { dataDir: benchDataDir, log, database: scope.database, progress };
  say(`${clock()}  [${benchmark.name}] ${benchmark.title}`);
  let outcome: BenchOutcome;
  try {
    outcome = await benchmark.run(ctx);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`[${benchmark.name}] failed: ${error instanceof Error ? error.stack : message}\n`);
    outcome = { parameters: {}, results: null, targets: [], ok: false, problems: [message.split('\n')[0]!] };
  } finally {
    await scope
      .dropAll()
      .catch((error: unknown) => process.stderr.write(`[${benchmark.name}] could not drop its database: ${String(error)}\n`));
  }
  const result: ResultFile = {
    name: benchmark.name,
    title: benchmark.title,
    description: benchmark.description,
    date: new Date().toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 100) / 10,
    ok: outcome.ok,
    problems: outcome.problems,
    machine: machineInfo(),
    database: scope.info[0] ?? null,
    parameters: outcome.parameters,
    results: outcome.results,
    targets: outcome.targets,
  };
  await writeAtomically(join(resultsDir, `${benchmark.name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  say('');
  say(`${benchmark.title}${outcome.ok ? '' : '  (FAILED: ' + outcome.problems.join('; ') + ')'}`);
  const bound = (t: Target) => ('atMost' in t ? `≤ ${t.atMost}` : `≥ ${t.atLeast}`);
  if (outcome.targets.length)
    say(
      textTable(
        ['figure', 'value', 'target', 'met'],
        outcome.targets.map((t) => [t.figure, t.value, bound(t), t.met ? 'yes' : 'NO']),
      ),
    );
  say(`  all figures: scripts/bench/results/${benchmark.name}.json`);
  say('');
  return outcome.ok;
}

async function main(names: string[]): Promise<number> {
  const all = await discover();
  const unknown = names.filter((name) => !all.has(name));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${[...all.keys()].join(', ')}\n`);
    return 2;
  }
  // Only the chosen ones are loaded, so one benchmark that no longer compiles does not stop the others.
  const chosen = names.length ? [...all.keys()].filter((name) => names.includes(name)) : [...all.keys()];
  await mkdir(resultsDir, { recursive: true });
  await mkdir(benchDataDir, { recursive: true });
  // Scratch space only: keep it out of git even before .gitignore lists it.
  if (!existsSync(join(benchDataDir, '.gitignore'))) await writeFile(join(benchDataDir, '.gitignore'), '*\n');
  const machine = machineInfo();
  say(`${clock()}  benchmarks: ${chosen.join(', ')} — Node ${machine.node}, ${machine.cpuCount} × ${machine.cpuModel}`);
  let failed = 0;
  try {
    for (const name of chosen) {
      let benchmark: Benchmark;
      try {
        benchmark = await load(name, all.get(name)!);
      } catch (error) {
        process.stderr.write(`[${name}] could not be loaded: ${error instanceof Error ? error.stack : String(error)}\n`);
        failed += 1;
        continue;
      }
      if (!(await runOne(benchmark))) failed += 1;
    }
  } finally {
    if (usedEmbedded)
      await stopEmbeddedCluster().catch((error: unknown) =>
        process.stderr.write(`could not stop the embedded PostgreSQL: ${String(error)}\n`),
      );
  }
  say(
    `${clock()}  results in scripts/bench/results/ (${chosen.map((name) => `${name}.json`).join(', ')}; what they mean: SUMMARY.md, by hand)${failed ? `; ${failed} benchmark(s) FAILED` : ''}`,
  );
  return failed ? 1 : 0;
}

main(process.argv.slice(2).filter((arg) => arg !== '--')).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
