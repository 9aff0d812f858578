import postgres from 'postgres';

export type Sql = postgres.Sql;
/** A pool or a transaction: what plain query functions take, so callers choose the transaction. */
export type Queryable = postgres.ISql;

/** A database URL with another database name, keeping its socket or host settings. */
export function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Every connection names its process, so the embedded cluster knows when its last user has gone. */
const applicationName = (role: string) => `afterimage:${process.pid}:${role}`;

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
