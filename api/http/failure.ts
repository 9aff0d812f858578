import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
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

const connectionErrors = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'ENOENT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '57P01', '57P03', '08006', '08001', '08003']);

function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && connectionErrors.has(code);
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
  if (isDatabaseUnavailable(error)) {
    log.warn('database unavailable', { reqId: req.id, err: error });
    sendError(res, 503, 'SERVICE_UNAVAILABLE', 'the database is unavailable; retry shortly', { headers: { 'Retry-After': '5' } });
    return;
  }
  log.error('request failed', { reqId: req.id, err: error, stack: (error as Error)?.stack });
  sendError(res, 500, 'INTERNAL_ERROR', `an unexpected error occurred; quote request id ${req.id ?? 'unknown'} when reporting it`);
}
