/**
 * Structured logs on stderr, so stdout stays clean for command output: one JSON object per line for
 * machines, or one readable line (time, level, message, key=value fields) for a person at a terminal.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(bindings: LogFields): Logger;
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

function serialise(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, code: (value as { code?: unknown }).code };
  return value;
}

type Write = (line: string) => void;

/** A field's value as `key=value` shows it: bare when it is one plain word, else as JSON. */
function prettyValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return value instanceof Date ? value.toISOString() : (JSON.stringify(value) ?? String(value));
}

/** `12:03:04.567 INFO  API listening url=http://127.0.0.1:8080` */
function prettyLine(entry: LogFields): string {
  const { time, level, msg, ...fields } = entry;
  const parts = [String(time).slice(11, 23), String(level).toUpperCase().padEnd(5), String(msg)];
  for (const key in fields) parts.push(`${key}=${prettyValue(fields[key])}`);
  return `${parts.join(' ')}\n`;
}

function emit(
  threshold: number,
  bindings: LogFields,
  write: Write,
  format: LogFormat,
  entryLevel: Exclude<LogLevel, 'silent'>,
  msg: string,
  fields?: LogFields,
) {
  if (rank[entryLevel] < threshold) return;
  const entry: LogFields = { time: new Date().toISOString(), level: entryLevel, msg, ...bindings };
  if (fields) for (const key in fields) entry[key] = serialise(fields[key]);
  write(format === 'pretty' ? prettyLine(entry) : `${JSON.stringify(entry)}\n`);
}

export function createLogger(
  level: LogLevel,
  bindings: LogFields = {},
  write: Write = (line) => process.stderr.write(line),
  format: LogFormat = 'json',
): Logger {
  const threshold = rank[level];
  // Methods, not arrow functions in properties: tsx names each of those as it is made (a defineProperty
  // each), and every request makes a logger of its own (`child`).
  return {
    debug(msg, fields) {
      emit(threshold, bindings, write, format, 'debug', msg, fields);
    },
    info(msg, fields) {
      emit(threshold, bindings, write, format, 'info', msg, fields);
    },
    warn(msg, fields) {
      emit(threshold, bindings, write, format, 'warn', msg, fields);
    },
    error(msg, fields) {
      emit(threshold, bindings, write, format, 'error', msg, fields);
    },
    child(more) {
      return createLogger(level, { ...bindings, ...more }, write, format);
    },
  };
}
