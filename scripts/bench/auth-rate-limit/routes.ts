import type { Server } from 'node:http';
import { z } from 'zod';
import type { createApi } from '../../../api/server.ts';
import { defineRoute } from '../../../api/http/route.ts';

const ok = z.object({ ok: z.literal(true) });
/** Authentication with a key and the requestsPerMinute counter, then nothing. */
export const keyRoute = defineRoute({
  method: 'GET',
  path: '/bench/key',
  tag: 'Bench',
  summary: 'API key + rate limit, no work',
  auth: 'key',
  response: ok,
  async handler() {
    return { ok: true as const };
  },
});
/** The same pipeline without a key lookup or a counter: the baseline. */
export const publicRoute = defineRoute({
  method: 'GET',
  path: '/bench/public',
  tag: 'Bench',
  summary: 'public, not rate limited, no work',
  auth: 'public',
  rateLimited: false,
  response: ok,
  async handler() {
    return { ok: true as const };
  },
});

interface Listening {
  port: number;
  close(): Promise<void>;
}

/** createApi(deps, routes) listening like startApi does (startApi itself always serves allRoutes). */
export async function listen(app: ReturnType<typeof createApi>): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    app.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
    app.server.once('error', reject);
  });
  const server = app.server as Server;
  server.keepAliveTimeout = 5_000;
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
