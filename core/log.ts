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

export function createLogger(
  level: LogLevel,
  bindings: LogFields = {},
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const threshold = rank[level];
  const emit = (entryLevel: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
    if (rank[entryLevel] < threshold) return;
    const entry: LogFields = { time: new Date().toISOString(), level: entryLevel, msg, ...bindings };
    if (fields) for (const [key, value] of Object.entries(fields)) entry[key] = serialise(value);
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => createLogger(level, { ...bindings, ...more }, write),
  };
}
