import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { connect, type Sql } from './database.ts';
import { databaseLocation, sameDatabase } from './databaseLocation.ts';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from './embedded.ts';
import { runningServices } from './runningServices.ts';

export interface Database {
  sql: Sql;
  /** Connection URL for libraries that take one (graphile-worker); may hold a password: never log it. */
  url: string;
  embedded: boolean;
  /**
   * Ends this process's connections; the last process using the embedded cluster also stops it. A
   * registered running service (core/db/runningServices.ts) uses it even while it holds no connection.
   */
  close(): Promise<void>;
}

/**
 * Session settings of the service's connections. Parameters decide the plan (a common tag or word against
 * a rare one, a narrow filter against none): a generic plan, which PostgreSQL may switch a prepared
 * statement to after five runs, can be 300× slower. No parallel workers: the service runs many short
 * queries at once on few cores, where one query's workers only take the cores the others wait for: at
 * 1,000,000 videos with 8 clients on 2 cores, phrases sorted by date went from p95 3.1–3.6 s to 250–300 ms.
 */
export const SERVICE_SESSION_SETTINGS = { plan_cache_mode: 'force_custom_plan', max_parallel_workers_per_gather: '0' };

/** The configured database, or the embedded cluster under DATA_DIR (started when needed) when none is. */
export async function openDatabase(config: Config, log: Logger, role: string): Promise<Database> {
  const embedded = !config.DATABASE_URL;
  const url = config.DATABASE_URL ?? (await ensureEmbeddedPostgres(config.dataDir, log));
  const sql = connect(url, {
    max: config.DATABASE_POOL_SIZE,
    role,
    statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
    settings: SERVICE_SESSION_SETTINGS,
    log,
  });
  let closed = false;
  return {
    sql,
    url,
    embedded,
    async close() {
      if (closed) return;
      closed = true;
      const othersUse = embedded ? (await otherServiceRegistered(config)) || (await otherProcessesConnected(sql).catch(() => true)) : true;
      await sql.end({ timeout: 5 });
      if (!othersUse) await stopEmbeddedPostgres(config.dataDir, log);
    },
  };
}

/** A service waiting out an outage holds no connection, yet must find its cluster running when the database is back. */
async function otherServiceRegistered(config: Config): Promise<boolean> {
  const database = databaseLocation(config);
  return (await runningServices()).some((service) => sameDatabase(service.database, database));
}

async function otherProcessesConnected(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ others: number }[]>`
    select count(*)::int as others from pg_stat_activity
    where application_name like 'afterimage:%'
      and split_part(application_name, ':', 2) <> ${String(process.pid)}`;
  return (row?.others ?? 0) > 0;
}
