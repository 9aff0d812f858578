/**
 * The service itself as callers see it: its tiers (GET and PATCH /api/tiers…, the admin tiers pages), its
 * health (GET /api/health), and stream tokens for its event streams (POST /api/stream-tokens).
 */
import { circuitOf, type Sql } from '../../core/db/database.ts';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../core/db/connectionFailure.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { TierName } from '../../core/schemas.ts';
import { loadTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier, type TierChanges } from '../../core/tiers/updateTier.ts';
import { HEARTBEAT_STALE_SECONDS } from '../../core/workerHeartbeat.ts';
import { defineAction, issueStreamToken } from '../http/route.ts';

/** Every tier, as this process keeps them (a change shows within seconds). */
export const listTiers = defineAction({
  what: 'the tiers',
  access: {},
  run: async ({ deps }) => [...(await deps.tiers.get()).values()],
});

/** A tier changed, then read back as every API process will soon serve it. */
export const changeTier = defineAction({
  what: 'changing a tier',
  access: { admin: true },
  async run({ deps }, { name, changes }: { name: TierName; changes: TierChanges }) {
    await updateTier(deps.sql, name, changes);
    deps.tiers.invalidate();
    const updated = (await loadTiers(deps.sql)).find((entry) => entry.name === name);
    if (!updated) throw notFound(`no tier ${name}`);
    return updated;
  },
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

/** The database, the workers' heartbeats and the job queue; 503 while the database cannot be reached. */
export const readHealth = defineAction({
  what: 'the health of the service',
  access: { rateLimited: false },
  async run({ deps }) {
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

/**
 * A token that opens one event stream as the caller, for a browser's EventSource. `streams` are the paths
 * of the event streams there are (the surface knows its routes); any other path is refused.
 */
export const mintStreamToken = defineAction({
  what: 'stream tokens',
  access: { scope: 'L1' },
  async run({ deps, caller }, { stream, streams }: { stream: string; streams: Array<{ path: string; pattern: RegExp }> }) {
    const path = stream.replace(/(.)\/$/, '$1');
    if (path.includes('?') || !streams.some(({ pattern }) => pattern.test(path))) {
      throw new AppError(
        'INVALID_INPUT',
        `stream: expected the path of an event stream, one of ${streams.map((route) => route.path).join(', ')} (no query)`,
      );
    }
    return issueStreamToken(deps, caller, path);
  },
});
