import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { mintStreamToken, STREAM_TOKEN_MINUTES } from '../../core/accounts/mintStreamToken.ts';
import { AppError } from '../../core/errors.ts';
import type { Caller, StreamTokenUse } from './auth.ts';
import type { ApiDeps, Route } from './route.ts';

/** Routes a stream token opens: event streams read with GET, as a browser's EventSource reads them. */
export const opensWithStreamToken = (route: Pick<Route, 'method' | 'events'>) => route.method === 'GET' && route.events !== undefined;

/** The `?token=` of a request to an event stream, with the path it was sent to; undefined when none was sent or the route takes none. */
export function streamTokenOf(
  route: Route,
  req: IncomingMessage & { path: string; query: Record<string, unknown> },
): StreamTokenUse | undefined {
  if (!opensWithStreamToken(route)) return undefined;
  const given = req.query.token;
  if (given === undefined) return undefined;
  if (typeof given !== 'string') throw new AppError('INVALID_INPUT', 'token: send one stream token');
  return { token: given, path: req.path.replace(/(.)\/$/, '$1') };
}

/** The `token` query parameter of an event stream route (authentication reads it; this documents it). */
export const streamTokenParam = z
  .string()
  .max(64)
  .optional()
  .describe(
    `a stream token for this stream (POST /api/stream-tokens, or sseToken/streamToken where a stream is started), in place of the API key, for clients that cannot send headers (a browser's EventSource); valid ${STREAM_TOKEN_MINUTES} minutes`,
  );

export const streamTokenObject = z
  .object({
    token: z.string().describe('opens only this stream, as the key that minted it, until expiresAt; keep it out of logs and shared links'),
    url: z.string().describe('the stream path with ?token=: what to give an EventSource'),
    expiresAt: z.string().describe('ISO 8601; a later reconnect needs a new token'),
  })
  .describe(
    `a short-lived token (${STREAM_TOKEN_MINUTES} minutes) that opens one event stream without the API key, for a browser's EventSource`,
  );

/** A stream token for `streamPath`, minted by the caller's key (stream tokens always act as a key). */
export async function issueStreamToken(
  deps: Pick<ApiDeps, 'sql'>,
  caller: Caller,
  streamPath: string,
): Promise<z.output<typeof streamTokenObject>> {
  if (caller.kind !== 'key') throw new AppError('API_KEY_REQUIRED', 'stream tokens are minted with an API key');
  const minted = await mintStreamToken(deps.sql, caller.keyId, streamPath);
  return { token: minted.token, url: `${streamPath}?token=${minted.token}`, expiresAt: minted.expiresAt.toISOString() };
}
