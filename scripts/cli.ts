import { stat } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type Config } from '../core/config.ts';
import { openDatabase, type Database } from '../core/db/openDatabase.ts';
import { schemaIsCurrent } from '../core/db/schemaIsCurrent.ts';
import { createLogger, type Logger, type LogLevel } from '../core/log.ts';

export { version } from '../core/version.ts';

/** A mistake in how a command was called: the message says how to call it. */
export class UsageError extends Error {}

/** `--help` or `-h` was given: the command's usage goes to stdout (exit 0) and nothing else runs. */
export class HelpRequested extends Error {
  constructor(readonly usage: string) {
    super('help requested');
  }
}

/** How a command is called, declared once: what --help prints, and what a mistake in the call shows. */
export interface Usage {
  usage: string;
  /** Whether the command takes arguments beside its options (files, channels, a tier). */
  positionals?: boolean;
}

/** --help or -h among the options (not after `--`, where everything is an argument). */
function asksForHelp(args: string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/**
 * The one option parser of every command: answers --help (-h) with the usage before anything runs,
 * takes --json everywhere, and refuses an unknown option or a missing value with the usage.
 */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, { usage, positionals }: Usage) {
  if (asksForHelp(args)) throw new HelpRequested(usage);
  try {
    return parseArgs({ args, options: { json: { type: 'boolean' }, ...options }, allowPositionals: positionals ?? false, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
}

/**
 * The subcommand a command group starts with (`users create …`) and the arguments after it; the
 * group's usage as help (`users --help`), or as a usage error for a missing or unknown subcommand.
 */
export function subcommand<Action extends string>(args: string[], actions: readonly Action[], usage: string): [Action, string[]] {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') throw new HelpRequested(usage);
  if (action === undefined) throw new UsageError(usage);
  if (!actions.includes(action as Action)) throw new UsageError(`unknown subcommand "${action}"\n${usage}`);
  return [action as Action, rest];
}

/** The log of a command or service at `level` (LOG_LEVEL unless given): readable lines on a terminal, JSON lines otherwise (LOG_FORMAT). */
export function commandLogger(config: Config, level: LogLevel = config.LOG_LEVEL): Logger {
  const pretty = config.LOG_FORMAT === 'pretty' || (config.LOG_FORMAT === 'auto' && process.stderr.isTTY === true);
  return createLogger(level, {}, undefined, pretty ? 'pretty' : 'json');
}

export function setup(): { config: Config; log: Logger } {
  const config = loadConfig();
  return { config, log: commandLogger(config) };
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
  const { config, log } = options.config ? { config: options.config, log: commandLogger(options.config) } : setup();
  const quiet = commandLogger(config, config.LOG_LEVEL === 'debug' ? 'debug' : 'warn');
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

/** A yt-dlp folder given to a command: a usage error that says which of missing or not a folder it is. */
export async function requireDirectory(path: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new UsageError(`${path} does not exist; give the folder yt-dlp wrote its .info.json files into`);
  if (!info.isDirectory()) throw new UsageError(`${path} is not a directory; give the folder yt-dlp wrote its .info.json files into`);
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
