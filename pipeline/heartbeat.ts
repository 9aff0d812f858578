import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Sql } from '../core/db/database.ts';
import { processAlive } from '../core/processAlive.ts';
import { ABANDONED_AFTER_SECONDS } from '../core/workerHeartbeat.ts';

export const processId = () => `${hostname()}:${process.pid}:${Date.now().toString(36)}`;

/**
 * Names this machine and PID namespace: two containers can share a hostname, never a PID namespace,
 * so a PID found dead under the same name really belongs to a dead process.
 */
function localHost(): string {
  try {
    return `${hostname()}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return hostname();
  }
}

export async function recordHeartbeat(sql: Sql, id: string, workerIds: string[]): Promise<void> {
  await sql`
    insert into worker_heartbeats (process_id, hostname, pid, worker_ids)
    values (${id}, ${localHost()}, ${process.pid}, ${workerIds})
    on conflict (process_id) do update set worker_ids = excluded.worker_ids, last_seen_at = now()`;
}

export async function removeHeartbeat(sql: Sql, id: string): Promise<void> {
  await sql`delete from worker_heartbeats where process_id = ${id}`;
}

/**
 * At start: a worker process of this machine whose PID is gone was killed; its jobs are freed at
 * once rather than after its heartbeat goes stale.
 */
export async function reapDeadLocalWorkers(sql: Sql): Promise<string[]> {
  const rows = await sql<{ processId: string; pid: number; workerIds: string[] }[]>`
    select process_id as "processId", pid, worker_ids as "workerIds" from worker_heartbeats where hostname = ${localHost()}`;
  const dead = rows.filter((row) => row.pid !== process.pid && !processAlive(row.pid));
  if (dead.length === 0) return [];
  const workerIds = dead.flatMap((row) => row.workerIds);
  await sql.begin(async (tx) => {
    await tx`delete from worker_heartbeats where process_id = any(${dead.map((row) => row.processId)})`;
    if (workerIds.length) await tx`select graphile_worker.force_unlock_workers(${workerIds})`;
  });
  return workerIds;
}

/**
 * Frees the jobs (and job queues) held by graphile-worker ids that no live process claims, so work
 * locked by a killed worker runs again within a minute instead of after graphile-worker's four hours.
 * A lock younger than the threshold is left alone: its worker may not have beaten yet.
 *
 * Only graphile-worker's public interface: the locks are read from the `jobs` view (one short
 * statement outside any transaction, as its documentation asks) and freed with
 * `force_unlock_workers`, which frees the queues too. Queues need no reading of their own: 0.17 locks
 * a job and its queue in one statement and frees both in one, so a locked queue always has a locked
 * job of the same worker id (the one exception, an administrator completing a job locked for over
 * four hours, leaves a queue lock that old, which graphile-worker already treats as free).
 */
export async function unlockAbandonedJobs(sql: Sql): Promise<string[]> {
  const [row] = await sql<{ workerIds: string[] }[]>`
    select coalesce(array_agg(distinct locked_by), '{}') as "workerIds" from graphile_worker.jobs
    where locked_by is not null and locked_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS})
      and locked_by not in (
        select unnest(worker_ids) from worker_heartbeats where last_seen_at > now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS}))`;
  const workerIds = row?.workerIds ?? [];
  // Ids of dead pools only: graphile-worker's one rule for this function (never a live worker's id).
  if (workerIds.length) await sql`select graphile_worker.force_unlock_workers(${workerIds})`;
  return workerIds;
}
