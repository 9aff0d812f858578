/**
 * graphile-worker's own messages in our structured log. Apart from core/log.ts: graphile-worker (and pg
 * with it) is a sixth of a CPU-second to load, which the commands that never migrate or run jobs (--help,
 * config, the MCP bridge, the operator commands on a current schema) no longer pay.
 */
import { Logger as GraphileLogger } from 'graphile-worker';
import type { Logger } from '../log.ts';
import { connectionFailureCode } from './connectionFailure.ts';

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
export function graphileLogger(log: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { component: 'graphile-worker', ...scope, ...(meta ?? {}) };
    // Its reports name the cause `error`, or `fatalError` when a job's end could not be recorded.
    const quiet = !meta?.failure && lostConnection(meta?.error ?? meta?.fatalError);
    const method = quiet ? 'debug' : level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'info' : 'debug';
    log[method](message, fields);
  });
}
