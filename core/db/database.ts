import postgres from 'postgres';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from './embedded.ts';

export type Sql = postgres.Sql;
/** A pool or a transaction: what plain query functions take, so callers choose the transaction. */
export type Queryable = postgres.ISql;

export interface Database {
  sql: Sql;
  /** Connection URL for libraries that take one (graphile-worker); may hold a password: never log it. */
  url: string;
  embedded: boolean;
  /** Ends this process's connections; the last process using the embedded cluster also stops it. */
  close(): Promise<void>;
}

/** A database URL with another database name, keeping its socket or host settings. */
export function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Every connection names its process, so the embedded cluster knows when its last user has gone. */
export const applicationName = (role: string) => `afterimage:${process.pid}:${role}`;

/** A postgres.js pool; a `?host=/socket/dir` in the URL (libpq's form, as pg reads it) selects a Unix socket. */
export function connect(url: string, options: { max: number; role: string; statementTimeoutMs?: number; settings?: Record<string, string> }): Sql {
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  if (socketDir) parsed.searchParams.delete('host');
  return postgres(parsed.toString(), {
    ...(socketDir ? { host: socketDir } : {}),
    max: options.max,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => undefined,
    connection: {
      application_name: applicationName(options.role),
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      ...options.settings,
    },
  });
}

export async function openDatabase(config: Config, log: Logger, role: string): Promise<Database> {
  const embedded = !config.DATABASE_URL;
  const url = config.DATABASE_URL ?? (await ensureEmbeddedPostgres(config.dataDir, log));
  const sql = connect(url, { max: config.DATABASE_POOL_SIZE, role, statementTimeoutMs: config.STATEMENT_TIMEOUT_MS });
  let closed = false;
  return {
    sql,
    url,
    embedded,
    async close() {
      if (closed) return;
      closed = true;
      const othersConnected = embedded ? await otherProcessesConnected(sql).catch(() => true) : true;
      await sql.end({ timeout: 5 });
      if (!othersConnected) await stopEmbeddedPostgres(config.dataDir, log);
    },
  };
}

async function otherProcessesConnected(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ others: number }[]>`
    select count(*)::int as others from pg_stat_activity
    where application_name like 'afterimage:%'
      and split_part(application_name, ':', 2) <> ${String(process.pid)}`;
  return (row?.others ?? 0) > 0;
}
