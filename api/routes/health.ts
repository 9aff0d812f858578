import { z } from 'zod';
import { readHealth } from '../actions/system.ts';
import { defineRoute, perform } from '../http/route.ts';

const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']).describe('degraded: the API works but no worker process is alive'),
  version: z.string(),
  uptimeSeconds: z.number(),
  database: z.object({ ok: z.boolean(), latencyMs: z.number() }),
  worker: z.object({ ok: z.boolean(), processes: z.number().int(), lastHeartbeatAt: z.string().nullable() }),
  queue: z.object({
    ready: z.number().int().describe('jobs waiting for a worker now'),
    running: z.number().int(),
    scheduled: z.number().int().describe('jobs due later (including retries)'),
    failed: z.number().int().describe('jobs that used all their attempts'),
  }),
});

export const healthRoute = defineRoute({
  method: 'GET',
  path: '/api/health',
  tag: 'System',
  summary: 'Service health: database, worker heartbeat, job queue and version',
  description:
    'Public. Answers 503 SERVICE_UNAVAILABLE (Retry-After: 2) while the database cannot be reached or refuses new connections (also during its smart shutdown), and 200 again within a second of its return, without a restart.',
  auth: 'public',
  ...readHealth.access,
  response: healthSchema,
  errors: ['SERVICE_UNAVAILABLE'],
  async handler(ctx) {
    return perform(readHealth, ctx, undefined);
  },
});
