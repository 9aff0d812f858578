import { z } from 'zod';
import { STREAM_TOKEN_MINUTES } from '../../core/keys.ts';
import { mintStreamToken } from '../actions/system.ts';
import { defineRoute, opensWithStreamToken, pathPattern, perform, type Route, streamTokenObject } from '../http/route.ts';

/** POST /api/stream-tokens: a token for any event stream of `routes` (a thunk: the list holds this route too). */
export const streamTokenRoute = (routes: () => Route[]) =>
  defineRoute({
    method: 'POST',
    path: '/api/stream-tokens',
    tag: 'Event streams',
    summary: "Mint a short-lived token that opens one event stream without the API key (for a browser's EventSource)",
    description: `An addition to the spec. Body {stream}: the path of a search, summary or stenogram stream (GET …/stream). The token opens that stream only, as this key (the same access checks, charged to the same quotas), for ${STREAM_TOKEN_MINUTES} minutes, and stops working when the key is revoked. Only its hash is stored. Open it as new EventSource(url). Tokens are also returned where a stream is started (sseToken of POST /api/search, streamToken of POST /api/summary/generate).`,
    auth: 'key',
    ...mintStreamToken.access,
    body: z.strictObject({ stream: z.string().min(1).max(200).describe('e.g. /api/search/{sessionId}/stream') }),
    response: streamTokenObject,
    status: 201,
    async handler(ctx) {
      const streams = routes()
        .filter(opensWithStreamToken)
        .map((route) => ({ path: route.path, pattern: pathPattern(route.path) }));
      return perform(mintStreamToken, ctx, { stream: ctx.body.stream, streams });
    },
  });
