import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type Config } from '../core/config.ts';
import { openDatabase, type Database } from '../core/db/openDatabase.ts';
import { schemaIsCurrent } from '../core/db/schemaIsCurrent.ts';
import { createLogger, type Logger } from '../core/log.ts';

export { version } from '../core/version.ts';

/** A mistake in how a command was called: the message says how to call it. */
export class UsageError extends Error {}

export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options: { json: { type: 'boolean' }, ...options }, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function setup(): { config: Config; log: Logger } {
  const config = loadConfig();
  return { config, log: createLogger(config.LOG_LEVEL) };
}

/**
 * Runs an operator command against the configured database (or the one `config` names), running or
 * not: the embedded cluster is started when needed and stopped again if nothing else uses it. The
 * schema is migrated first unless one query shows it current (migrate, and graphile-worker with it,
 * is then not even loaded).
 */
export async function withDatabase<T>(
  work: (db: Database, log: Logger) => Promise<T>,
  options: { migrate?: boolean; config?: Config } = {},
): Promise<T> {
  const { config, log } = options.config ? { config: options.config, log: createLogger(options.config.LOG_LEVEL) } : setup();
  const quiet = createLogger(config.LOG_LEVEL === 'debug' ? 'debug' : 'warn');
  const db = await openDatabase(config, quiet, 'cli');
  try {
    if ((options.migrate ?? true) && !(await schemaIsCurrent(db.sql))) {
      const { migrate } = await import('../core/db/migrate.ts');
      await migrate(db.sql, db.url, quiet);
    }
    return await work(db, log);
  } finally {
    await db.close();
  }
}

/** Prints a result for people, or as one JSON document for scripts. */
export function output(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '(none)';
  const columns = Object.keys(rows[0]!);
  const cells = rows.map((row) => columns.map((column) => String(row[column] ?? '-')));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((row) => row[index]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
