/**
 * Validators and conditional requests (RFC 9110 §8.8, §13) for every cacheable read: files
 * (api/http/sendFile.ts) and the answers of api/http/representation.ts.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AppError } from '../../core/errors.ts';

/** What a representation is validated by: a strong ETag and, where the content has a time, when it last changed. */
export interface Validators {
  etag: string;
  modifiedAt?: Date;
}

/** A strong ETag of these bytes: 144 bits of their SHA-256, as a quoted base64url string. */
export const entityTag = (content: string | Buffer) => `"${createHash('sha256').update(content).digest('base64url').slice(0, 24)}"`;

const entityTags = (header: string) => header.split(',').map((tag) => tag.trim());
/** If-None-Match compares weakly (§13.1.2): W/"x" matches "x". */
const weakMatch = (header: string, etag: string) => entityTags(header).some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag);
const strongMatch = (header: string, etag: string) => entityTags(header).some((tag) => tag === '*' || tag === etag);
/** HTTP dates have whole seconds; a time is compared at that precision. */
export const seconds = (time: number) => Math.floor(time / 1000);
export const httpDate = (header: string | undefined): number | undefined => {
  const time = header === undefined ? NaN : Date.parse(header);
  return Number.isNaN(time) ? undefined : seconds(time);
};

export type Outcome = 'send' | 'not-modified' | 'precondition-failed';

/** RFC 9110 §13.2.2: the preconditions in their order of evaluation; the dates only where the content has a time. */
export function evaluatePreconditions(req: IncomingMessage, validators: Validators): Outcome {
  const modified = validators.modifiedAt && seconds(validators.modifiedAt.getTime());
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = req.headers;
  if (ifMatch !== undefined) {
    if (!strongMatch(ifMatch, validators.etag)) return 'precondition-failed';
  } else {
    const unmodifiedSince = httpDate(req.headers['if-unmodified-since']);
    if (unmodifiedSince !== undefined && modified !== undefined && modified > unmodifiedSince) return 'precondition-failed';
  }
  if (ifNoneMatch !== undefined) return weakMatch(ifNoneMatch, validators.etag) ? 'not-modified' : 'send';
  const modifiedSince = httpDate(req.headers['if-modified-since']);
  return modifiedSince !== undefined && modified !== undefined && modified <= modifiedSince ? 'not-modified' : 'send';
}

/** 412: If-Match or If-Unmodified-Since named another version of `what`. */
export const preconditionFailed = (what: string, headers: Record<string, string>) =>
  new AppError('INVALID_INPUT', `${what} is no longer the one If-Match or If-Unmodified-Since names; read it again`, {
    status: 412,
    headers,
  });
