/** Structured logs: one JSON object per line on stderr, so stdout stays clean for command output. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
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

function emit(
  threshold: number,
  bindings: LogFields,
  write: Write,
  entryLevel: Exclude<LogLevel, 'silent'>,
  msg: string,
  fields?: LogFields,
) {
  if (rank[entryLevel] < threshold) return;
  const entry: LogFields = { time: new Date().toISOString(), level: entryLevel, msg, ...bindings };
  if (fields) for (const key in fields) entry[key] = serialise(fields[key]);
  write(`${JSON.stringify(entry)}\n`);
}

export function createLogger(level: LogLevel, bindings: LogFields = {}, write: Write = (line) => process.stderr.write(line)): Logger {
  const threshold = rank[level];
  // Methods, not arrow functions in properties: tsx names each of those as it is made (a defineProperty
  // each), and every request makes a logger of its own (`child`).
  return {
    debug(msg, fields) {
      emit(threshold, bindings, write, 'debug', msg, fields);
    },
    info(msg, fields) {
      emit(threshold, bindings, write, 'info', msg, fields);
    },
    warn(msg, fields) {
      emit(threshold, bindings, write, 'warn', msg, fields);
    },
    error(msg, fields) {
      emit(threshold, bindings, write, 'error', msg, fields);
    },
    child(more) {
      return createLogger(level, { ...bindings, ...more }, write);
    },
  };
}
