/**
 * A worker process's heartbeat (worker_heartbeats, one row per process): every timing of it, here
 * only, for the worker that beats (pipeline/heartbeat.ts), the API's health and the operator commands.
 */

/** A worker process beats this often. */
export const HEARTBEAT_INTERVAL_SECONDS = 10;

/** A worker process counts as alive while its last beat is younger than this (three beats: one late beat is no outage). */
export const HEARTBEAT_STALE_SECONDS = 3 * HEARTBEAT_INTERVAL_SECONDS;

/**
 * A job lock whose worker id no beat younger than this names is abandoned, and its jobs are freed
 * (graphile-worker itself waits four hours). Twice the stale time: a process is reported gone before
 * anything it held is taken from it.
 */
export const ABANDONED_AFTER_SECONDS = 2 * HEARTBEAT_STALE_SECONDS;
