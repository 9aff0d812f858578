import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { connectionFailureCode, DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from '../../core/db/connectionFailure.ts';
import type { Logger } from '../../core/log.ts';
import { sendError } from './respond.ts';

/** Names each offending field, so a client can fix its request without guessing. */
export function describeIssues(error: z.ZodError, where: string): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.map(String).join('.') : where;
      if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${[...issue.path.map(String), key].join('.')}: unknown ${where === 'query' ? 'parameter' : 'field'}`).join('; ');
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

/** The one place a thrown error becomes a response: the caller's errors as they are, ours without internals. */
export function sendFailure(error: unknown, req: IncomingMessage & { id?: string }, res: ServerResponse, log: Logger): void {
  if (error instanceof AppError) {
    sendError(res, error.status, error.code, error.message, { headers: error.options.headers, details: error.options.details });
    return;
  }
  if (error instanceof z.ZodError) {
    sendError(res, 400, 'INVALID_INPUT', describeIssues(error, 'body'));
    return;
  }
  const status = (error as { status?: number })?.status;
  if (status === 400 || (error as Error)?.name === 'URIError') {
    sendError(res, 400, 'INVALID_INPUT', 'the request URL is malformed');
    return;
  }
  const databaseFailure = connectionFailureCode(error);
  if (databaseFailure) {
    // A failed or refused connect is the circuit's to log, once per outage (core/db/circuit.ts), not once per request.
    if (databaseFailure === DATABASE_UNAVAILABLE) log.debug('database unavailable', { reqId: req.id, err: error });
    else log.warn('database unavailable', { reqId: req.id, err: error });
    sendError(res, 503, 'SERVICE_UNAVAILABLE', 'the database is unavailable; retry shortly', { headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) } });
    return;
  }
  log.error('request failed', { reqId: req.id, err: error, stack: (error as Error)?.stack });
  sendError(res, 500, 'INTERNAL_ERROR', `an unexpected error occurred; quote request id ${req.id ?? 'unknown'} when reporting it`);
}
