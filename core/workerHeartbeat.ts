/** A worker process counts as alive while its heartbeat (worker_heartbeats.last_seen_at) is younger than this. */
export const HEARTBEAT_STALE_SECONDS = 30;
