/**
 * `afterimage status`: what runs on this database and whether it is well, for an operator or a
 * script (--json): the services and workers with their versions, the queue, each source's last
 * crawl, the status checks due, the stenogram store and the disk. Something wrong (no worker, a
 * source failing for an hour, migrations pending) is printed with what to do, and the exit code is 1.
 * Read-only: it never migrates, and each figure is one short statement.
 */
import { statfs } from 'node:fs/promises';
import type { Config } from '../../core/config.ts';
import { sourceHealth, type SourceHealth } from '../../core/crawl/watchSource.ts';
import { connectedServices, type ConnectedService } from '../../core/db/connectedServices.ts';
import type { Sql } from '../../core/db/database.ts';
import { databaseLocation, describeDatabaseLocation } from '../../core/db/databaseLocation.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';
import { schemaIsCurrent } from '../../core/db/schemaIsCurrent.ts';
import { queueDepth, type TaskQueue } from '../../core/jobs/queueDepth.ts';
import { checksDue } from '../../core/status/checksDue.ts';
import { configuredStenogramStore } from '../../core/stenograms/store.ts';
import { HEARTBEAT_STALE_SECONDS } from '../../core/workerHeartbeat.ts';
import { output, parseOptions, table } from '../cli.ts';
import { dataDirOption, withChosenDatabase } from '../serviceDatabase.ts';

export const statusUsage = `usage: afterimage status [--json] [--data-dir DIR]

What runs on this database and whether it is well: the services and workers connected and their
versions, the job queue by task and its oldest waiting job, each source's last crawl and its errors,
the status checks due now, the stenogram store and the disk space of DATA_DIR.

Exits 1, printing what is wrong and what to do, when no worker runs, a source has failed for an
hour or more, or migrations are pending; else 0. --json prints the same as one JSON document.`;

/** A source failing this long is a problem, not a passing outage. */
const FAILING_PROBLEM_SECONDS = 3600;

interface Problem {
  what: string;
  fix: string;
}

interface Worker {
  hostname: string;
  pid: number;
  version: string | null;
  startedAt: string;
  lastSeenAt: string;
  alive: boolean;
}

interface Migrations {
  current: boolean;
  applied: number;
  /** Files of sql/ not applied yet (or graphile-worker's own schema behind). */
  pending: string[];
}

interface StatusReport {
  ok: boolean;
  problems: Problem[];
  database: { location: string; migrations: Migrations };
  services: ConnectedService[];
  workers: Worker[];
  queue: TaskQueue[];
  oldestWaiting: { task: string; waitingSeconds: number } | null;
  sources: SourceHealth[];
  checksDue: number | null;
  stenograms: { store: string; documents: number; bytes: number; missingFiles: number } | null;
  disk: { path: string; freeBytes: number; totalBytes: number } | null;
}

async function migrationState(sql: Sql): Promise<Migrations> {
  const files = await readMigrations();
  const applied = await sql<{ version: number }[]>`select version from schema_migrations`.catch(() => []);
  const done = new Set(applied.map((row) => row.version));
  const pending = files.filter((file) => !done.has(file.version)).map((file) => file.file);
  const current = await schemaIsCurrent(sql);
  // Everything of sql/ applied yet not current: graphile-worker's schema is behind (or a file changed, which migrate names).
  if (!current && pending.length === 0) pending.push("graphile-worker's schema");
  return { current, applied: done.size, pending };
}

async function workers(sql: Sql, services: ConnectedService[]): Promise<Worker[]> {
  const rows = await sql<Omit<Worker, 'version'>[]>`
    select split_part(hostname, '/', 1) as hostname, pid, to_json(started_at)#>>'{}' as "startedAt",
      to_json(last_seen_at)#>>'{}' as "lastSeenAt", last_seen_at > now() - make_interval(secs => ${HEARTBEAT_STALE_SECONDS}) as alive
    from worker_heartbeats order by started_at`;
  // The heartbeat names no version; the worker's connections do (the same pid on another machine is told apart by role).
  const versionOf = (pid: number) => services.find((service) => service.pid === pid && service.role !== 'cli')?.version ?? null;
  return rows.map((row) => ({ ...row, version: versionOf(row.pid) }));
}

async function stenogramStore(sql: Sql, config: Config): Promise<StatusReport['stenograms']> {
  const [row] = await sql<{ documents: number; bytes: number; missingFiles: number }[]>`
    select count(*) filter (where status = 'generated')::int as documents, coalesce(sum(bytes), 0)::float8 as bytes,
      count(*) filter (where file_missing_since is not null)::int as "missingFiles"
    from stenograms`;
  return { store: configuredStenogramStore(config).location, ...row! };
}

async function disk(path: string): Promise<StatusReport['disk']> {
  const stats = await statfs(path).catch(() => undefined);
  return stats ? { path, freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize } : null;
}

/** A long list of migration files shortened to its count, first and last. */
const pendingList = (pending: string[]) =>
  pending.length <= 3 ? pending.join(', ') : `${pending.length} (${pending[0]} … ${pending.at(-1)})`;

function problemsOf(report: Omit<StatusReport, 'ok' | 'problems'>): Problem[] {
  const problems: Problem[] = [];
  const { migrations } = report.database;
  if (!migrations.current)
    problems.push({
      what: `migrations pending: ${pendingList(migrations.pending)}`,
      fix: 'run `npx afterimage migrate` once (or restart the service: `npx afterimage start` migrates first)',
    });
  if (migrations.current && !report.workers.some((worker) => worker.alive))
    problems.push({
      what: 'no worker is running: crawls, status checks and generations stay queued',
      fix: 'start one: `npx afterimage worker` (or `npx afterimage start`, the API and a worker in one process)',
    });
  for (const source of report.sources) {
    if (!source.failingSince || Date.now() - Date.parse(source.failingSince) < FAILING_PROBLEM_SECONDS * 1000) continue;
    problems.push({
      what: `source ${source.source} has failed since ${source.failingSince} (last success: ${source.lastSuccessAt ?? 'never'}): ${source.lastError}`,
      fix: `check its settings (\`npx afterimage config\`) and that its upstream answers; the next crawls retry it`,
    });
  }
  return problems;
}

async function collect(sql: Sql, config: Config): Promise<StatusReport> {
  const migrations = await migrationState(sql);
  const services = await connectedServices(sql);
  const databasePart = { location: describeDatabaseLocation(databaseLocation(config)), migrations };
  const diskPart = await disk(config.dataDir);
  // A database never migrated has none of the tables below.
  if (migrations.applied === 0) {
    const empty = { database: databasePart, services, workers: [], queue: [], oldestWaiting: null, sources: [] };
    const partial = { ...empty, checksDue: null, stenograms: null, disk: diskPart };
    const problems = problemsOf(partial);
    return { ok: problems.length === 0, problems, ...partial };
  }
  // A schema behind may lack what a figure reads (graphile-worker's tables above all): that figure is left out.
  const unlessBehind = <T>(figure: Promise<T>, fallback: T) => (migrations.current ? figure : figure.catch(() => fallback));
  const [workerList, queue, sources, due, stenograms] = await Promise.all([
    unlessBehind(workers(sql, services), []),
    unlessBehind(queueDepth(sql), []),
    unlessBehind(sourceHealth(sql), []),
    unlessBehind(checksDue(sql), null),
    unlessBehind(stenogramStore(sql, config), null),
  ]);
  const oldest = queue
    .filter((task) => task.oldestWaitingSeconds !== null)
    .sort((a, b) => b.oldestWaitingSeconds! - a.oldestWaitingSeconds!)[0];
  const report = {
    database: databasePart,
    services,
    workers: workerList,
    queue,
    oldestWaiting: oldest ? { task: oldest.task, waitingSeconds: Math.round(oldest.oldestWaitingSeconds!) } : null,
    sources,
    checksDue: due,
    stenograms,
    disk: diskPart,
  };
  const problems = problemsOf(report);
  return { ok: problems.length === 0, problems, ...report };
}

const ago = (iso: string | null) => {
  if (!iso) return '-';
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return seconds < 120
    ? `${seconds} s ago`
    : seconds < 7200
      ? `${Math.round(seconds / 60)} min ago`
      : `${Math.round(seconds / 3600)} h ago`;
};
const size = (bytes: number) =>
  bytes >= 2 ** 30
    ? `${(bytes / 2 ** 30).toFixed(1)} GiB`
    : bytes >= 2 ** 20
      ? `${(bytes / 2 ** 20).toFixed(1)} MiB`
      : `${Math.round(bytes / 1024)} KiB`;

function describe(report: StatusReport): string {
  const { migrations } = report.database;
  const lines = [
    report.ok ? 'afterimage status: all well' : `afterimage status: ${report.problems.length} problem(s)`,
    ...report.problems.flatMap((problem) => [`  ✗ ${problem.what}`, `    → ${problem.fix}`]),
    '',
    `database: ${report.database.location}; ${migrations.applied} migrations applied${migrations.current ? ', schema current' : `, pending: ${pendingList(migrations.pending)}`}`,
    '',
    'services connected to it:',
    table(
      report.services.map((service) => ({
        pid: service.pid,
        role: service.role,
        version: service.version,
        from: service.client,
        since: ago(service.connectedSince),
        connections: service.connections,
      })),
    ),
    '',
    'workers (heartbeats):',
    table(
      report.workers.map((worker) => ({
        host: worker.hostname,
        pid: worker.pid,
        version: worker.version,
        started: ago(worker.startedAt),
        'last beat': ago(worker.lastSeenAt),
        alive: worker.alive ? 'yes' : 'NO',
      })),
    ),
    '',
    'queue:',
    table(
      report.queue.map((task) => ({
        task: task.task,
        waiting: task.waiting,
        scheduled: task.scheduled,
        running: task.running,
        failed: task.failed,
        'oldest waiting': task.oldestWaitingSeconds === null ? '-' : `${Math.round(task.oldestWaitingSeconds)} s`,
      })),
    ),
    report.oldestWaiting
      ? `oldest job waiting: ${report.oldestWaiting.task}, due for ${report.oldestWaiting.waitingSeconds} s`
      : 'no job waiting',
    '',
    'sources:',
    table(
      report.sources.map((source) => ({
        source: source.source,
        'last crawl': ago(source.lastCrawlAt),
        'last success': ago(source.lastSuccessAt),
        'failures (1 day)': source.failuresLastDay,
        'last error': source.lastError,
      })),
    ),
    '',
    `status checks due now: ${report.checksDue ?? '-'}`,
    report.stenograms
      ? `stenograms: ${report.stenograms.store}, ${report.stenograms.documents} documents (${size(report.stenograms.bytes)}), ${report.stenograms.missingFiles} files missing`
      : 'stenograms: -',
    report.disk
      ? `disk: ${report.disk.path}: ${size(report.disk.freeBytes)} free of ${size(report.disk.totalBytes)}`
      : 'disk: DATA_DIR does not exist',
  ];
  return lines.join('\n');
}

/** `afterimage status [--json] [--data-dir DIR]`. */
export async function statusCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(args, { ...dataDirOption }, { usage: statusUsage });
  const report = await withChosenDatabase(values['data-dir'], (db, _log, config) => collect(db.sql, config), { migrate: false });
  output(values.json, report, () => describe(report));
  if (!report.ok) process.exitCode = 1;
}
