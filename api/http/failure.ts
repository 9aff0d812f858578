import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError, type ErrorCode } from '../../core/errors.ts';
import { connectionFailureCode, DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from '../../core/db/connectionFailure.ts';
import type { Logger } from '../../core/log.ts';
import { sendError } from './representation.ts';

/** Names each offending field, so a client can fix its request without guessing. */
export function describeIssues(error: z.ZodError, where: string): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.map(String).join('.') : where;
      if (issue.code === 'unrecognized_keys')
        return issue.keys
          .map((key) => `${[...issue.path.map(String), key].join('.')}: unknown ${where === 'query' ? 'parameter' : 'field'}`)
          .join('; ');
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

/** What a failed request answers: its status, code, message and headers, whatever shape it is sent in. */
export interface Failure {
  status: number;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string> | undefined;
  details?: unknown;
}

/** The one place a thrown error becomes an answer: the caller's errors as they are, ours without internals. */
export function failureOf(error: unknown, req: IncomingMessage & { id?: string }, log: Logger): Failure {
  if (error instanceof AppError)
    return {
      status: error.status,
      code: error.code,
      message: error.message,
      headers: error.options.headers,
      details: error.options.details,
    };
  if (error instanceof z.ZodError) return { status: 400, code: 'INVALID_INPUT', message: describeIssues(error, 'body') };
  const status = (error as { status?: number })?.status;
  if (status === 400 || (error as Error)?.name === 'URIError')
    return { status: 400, code: 'INVALID_INPUT', message: 'the request URL is malformed' };
  const databaseFailure = connectionFailureCode(error);
  if (databaseFailure) {
    // A failed or refused connect is the circuit's to log, once per outage (core/db/circuit.ts), not once per request.
    if (databaseFailure === DATABASE_UNAVAILABLE) log.debug('database unavailable', { reqId: req.id, err: error });
    else log.warn('database unavailable', { reqId: req.id, err: error });
    return {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'the database is unavailable; retry shortly',
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
    };
  }
  log.error('request failed', { reqId: req.id, err: error, stack: (error as Error)?.stack });
  return {
    status: 500,
    code: 'INTERNAL_ERROR',
    message: `an unexpected error occurred; quote request id ${req.id ?? 'unknown'} when reporting it`,
  };
}

/** A failure in the spec's JSON envelope. */
export function sendFailure(error: unknown, req: IncomingMessage & { id?: string }, res: ServerResponse, log: Logger): void {
  const failure = failureOf(error, req, log);
  sendError(res, failure.status, failure.code, failure.message, { headers: failure.headers, details: failure.details });
}
