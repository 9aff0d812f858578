import { z } from 'zod';
import { circuitOf, type Sql } from '../../core/db/database.ts';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../core/db/connectionFailure.ts';
import { AppError } from '../../core/errors.ts';
import { HEARTBEAT_STALE_SECONDS } from '../../core/workerHeartbeat.ts';
import { defineRoute } from '../http/route.ts';

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

const timeout = (ms: number) =>
  new Promise<never>((_, reject) =>
    setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'CONNECT_TIMEOUT' })), ms).unref(),
  );

async function probe(sql: Sql) {
  const [row] = await sql<
    { processes: number; lastHeartbeatAt: string | null; ready: number; running: number; scheduled: number; failed: number }[]
  >`
    select
      (select count(*)::int from worker_heartbeats where last_seen_at > now() - make_interval(secs => ${HEARTBEAT_STALE_SECONDS})) as processes,
      (select to_json(max(last_seen_at))#>>'{}' from worker_heartbeats) as "lastHeartbeatAt",
      count(*) filter (where locked_at is null and run_at <= now() and attempts < max_attempts)::int as ready,
      count(*) filter (where locked_at is not null)::int as running,
      count(*) filter (where locked_at is null and run_at > now() and attempts < max_attempts)::int as scheduled,
      count(*) filter (where attempts >= max_attempts)::int as failed
    from graphile_worker.jobs`;
  return row!;
}

export const healthRoute = defineRoute({
  method: 'GET',
  path: '/api/health',
  tag: 'System',
  summary: 'Service health: database, worker heartbeat, job queue and version',
  description:
    'Public. Answers 503 SERVICE_UNAVAILABLE (Retry-After: 2) while the database cannot be reached or refuses new connections (also during its smart shutdown), and 200 again within a second of its return, without a restart.',
  auth: 'public',
  rateLimited: false,
  response: healthSchema,
  errors: ['SERVICE_UNAVAILABLE'],
  async handler({ deps }) {
    const started = performance.now();
    const circuit = circuitOf(deps.sql);
    let row: Awaited<ReturnType<typeof probe>>;
    try {
      if (circuit?.isOpen()) throw circuit.unavailableError();
      // A fresh connection too, not only the pool's: in a smart shutdown the open sessions still
      // answer while the server refuses new ones (57P03), and the service cannot last on those.
      const [accepts, answer] = await Promise.all([circuit?.verify() ?? true, Promise.race([probe(deps.sql), timeout(2_000)])]);
      if (!accepts) throw circuit!.unavailableError();
      row = answer;
    } catch (error) {
      // The cause (socket paths, host names) goes to the log, not to the public; an open circuit has logged the outage once.
      if (!circuit?.isOpen()) deps.log.warn('health probe failed', { err: error });
      throw new AppError('SERVICE_UNAVAILABLE', 'the database is unreachable; retry shortly', {
        headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' },
        details: { database: { ok: false }, version: deps.version },
      });
    }
    const { processes, lastHeartbeatAt, ...queue } = row;
    return {
      status: processes > 0 ? ('ok' as const) : ('degraded' as const),
      version: deps.version,
      uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
      database: { ok: true, latencyMs: Math.round((performance.now() - started) * 100) / 100 },
      worker: { ok: processes > 0, processes, lastHeartbeatAt },
      queue,
    };
  },
});
