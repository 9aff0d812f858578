/**
 * Structured logs on stderr, so stdout stays clean for command output: one JSON object per line for
 * machines, or one readable line (time, level, message, key=value fields) for a person at a terminal.
 */
import type { Logger as GraphileLogger } from 'graphile-worker';
import { connectionFailureCode } from './db/connectionFailure.ts';

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

/**
 * A lost connection as graphile-worker's pg pool reports it: the server's codes, the socket's own
 * (every socket of graphile-worker's is the database's, so ECONNREFUSED and ENOENT are unambiguous
 * here), pg's refusal to use a client whose connection broke, or pg's word for a socket the server
 * closed without a goodbye (no code: a postmaster killed before its backends sent one).
 */
function lostConnection(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    Boolean(connectionFailureCode(error)) ||
    code === 'ECONNREFUSED' ||
    code === 'ENOENT' ||
    (typeof message === 'string' &&
      (message.includes('connection error and is not queryable') || message === 'Connection terminated unexpectedly'))
  );
}

/**
 * Routes graphile-worker's own messages into our structured log. Its reports of lost connections (every
 * pooled client, every retry of its LISTEN) go to debug: the circuit says once that the database is gone
 * (core/db/circuit.ts). A job's failure stays an error.
 */
export async function graphileLogger(log: Logger): Promise<GraphileLogger> {
  // Loaded here, at the first use: the commands that never migrate or run jobs (--help, config, the MCP bridge,
  // operator commands on a current schema) do without graphile-worker and pg, a sixth of a CPU-second to load.
  const { Logger } = await import('graphile-worker');
  return new Logger((scope) => (level, message, meta) => {
    const fields = { component: 'graphile-worker', ...scope, ...(meta ?? {}) };
    // Its reports name the cause `error`, or `fatalError` when a job's end could not be recorded.
    const quiet = !meta?.failure && lostConnection(meta?.error ?? meta?.fatalError);
    const method = quiet ? 'debug' : level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'info' : 'debug';
    log[method](message, fields);
  });
}
