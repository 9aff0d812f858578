/**
 * The Prometheus metrics of a process (`GET /metrics`, api/routes/metrics.ts): every metric is defined
 * here, once. Counters and histograms are this process's own, moved where the work happens (HTTP
 * answers, SSE streams, jobs, outbound source requests, webhook attempts, crawled videos, status
 * checks); gauges of the whole deployment (queue depth, checks due) are read from the database at
 * scrape time, in a few cheap statements, so any API process shows the same figures.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Sql } from './db/database.ts';
import { queueDepth } from './jobs/queueDepth.ts';
import { checksDue } from './status/checksDue.ts';

/** What this process counts itself. */
const processRegistry = new Registry();
/** What the database tells (the queue, checks due): shown by API processes only, so a sum over processes does not count it twice. */
const queueRegistry = new Registry();

export const METRICS_CONTENT_TYPE = processRegistry.contentType;

/** Request durations: from a cached read (milliseconds) to a long export. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Job durations: from a tiny job to a long crawl step or generation. */
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800];

export const httpRequests = new Counter({
  name: 'afterimage_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern (never the raw path) and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [processRegistry],
});

export const httpDuration = new Histogram({
  name: 'afterimage_http_request_duration_seconds',
  help: 'Time from a request to its answer sent (an event stream: until it ends), by method and route pattern',
  labelNames: ['method', 'route'] as const,
  buckets: DURATION_BUCKETS,
  registers: [processRegistry],
});

export const sseConnections = new Gauge({
  name: 'afterimage_sse_connections',
  help: 'Server-sent event streams open now',
  registers: [processRegistry],
});

export const jobDuration = new Histogram({
  name: 'afterimage_job_duration_seconds',
  help: "Time a job's run took in this worker, by task and outcome (ok or error)",
  labelNames: ['task', 'outcome'] as const,
  buckets: JOB_BUCKETS,
  registers: [processRegistry],
});

export const jobFailures = new Counter({
  name: 'afterimage_job_failures_total',
  help: 'Job runs that failed in this worker (retried while attempts remain), by task',
  labelNames: ['task'] as const,
  registers: [processRegistry],
});

export const videosCrawled = new Counter({
  name: 'afterimage_videos_crawled_total',
  help: 'Videos a crawl step read from a source and stored, by source',
  labelNames: ['source'] as const,
  registers: [processRegistry],
});

export const statusChecks = new Counter({
  name: 'afterimage_status_checks_total',
  help: "Videos whose status a probe checked, by the probe's outcome",
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});

export const sourceRequests = new Counter({
  name: 'afterimage_source_requests_total',
  help: 'Outbound requests to a source (youtube_api, wayback, youtube_web), by source and final HTTP status (none: no answer)',
  labelNames: ['source', 'status'] as const,
  registers: [processRegistry],
});

export const sourceErrors = new Counter({
  name: 'afterimage_source_request_errors_total',
  help: 'Outbound requests to a source that failed: an HTTP status of 400 or more, or none (a timeout, a network error, a refusal)',
  labelNames: ['source', 'status'] as const,
  registers: [processRegistry],
});

export const webhookAttempts = new Counter({
  name: 'afterimage_webhook_attempts_total',
  help: 'Webhook delivery attempts, by outcome: delivered (2xx) or failed (retried while the schedule allows)',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});

const databaseConnections = new Gauge({
  name: 'afterimage_db_connections',
  help: "This process's open database connections, by pool (its role) and state (active, idle, …)",
  labelNames: ['pool', 'state'] as const,
  registers: [processRegistry],
});

const databasePoolSize = new Gauge({
  name: 'afterimage_db_pool_size',
  help: 'Most connections of the main pool (DATABASE_POOL_SIZE)',
  registers: [processRegistry],
});

const jobsQueued = new Gauge({
  name: 'afterimage_jobs',
  help: 'Jobs in the queue, by task and state: waiting (due, not taken), scheduled (due later), running, failed (out of attempts)',
  labelNames: ['task', 'state'] as const,
  registers: [queueRegistry],
});

const oldestWaiting = new Gauge({
  name: 'afterimage_job_oldest_waiting_seconds',
  help: 'How long the oldest waiting job of a task has been due',
  labelNames: ['task'] as const,
  registers: [queueRegistry],
});

const checksDueNow = new Gauge({
  name: 'afterimage_status_checks_due',
  help: 'Videos whose next status check is due now (not yet queued)',
  registers: [queueRegistry],
});

let defaultMetricsOn = false;

/** Event-loop lag, memory, CPU, handles (prom-client's defaults): started once, by the first process that serves metrics. */
function collectProcessMetrics(): void {
  if (defaultMetricsOn) return;
  defaultMetricsOn = true;
  collectDefaultMetrics({ register: processRegistry });
}

/** The queue and the checks due, from the database: two short statements (the jobs table is the queue; the checks an index range). */
async function readQueue(sql: Sql): Promise<void> {
  const [tasks, due] = await Promise.all([queueDepth(sql), checksDue(sql)]);
  jobsQueued.reset();
  oldestWaiting.reset();
  for (const row of tasks) {
    for (const state of ['waiting', 'scheduled', 'running', 'failed'] as const) jobsQueued.set({ task: row.task, state }, row[state]);
    oldestWaiting.set({ task: row.task }, row.oldestWaitingSeconds ?? 0);
  }
  checksDueNow.set(due);
}

/** This process's connections as PostgreSQL sees them (every pool names its process: core/db/database.ts). */
async function readConnections(sql: Sql, poolSize: number): Promise<void> {
  const rows = await sql<{ pool: string; state: string; connections: number }[]>`
    select split_part(application_name, ':', 3) as pool, coalesce(state, 'unknown') as state, count(*)::int as connections
    from pg_stat_activity where datname = current_database() and application_name like ${`afterimage:${process.pid}:%`} group by 1, 2`;
  databaseConnections.reset();
  for (const row of rows) databaseConnections.set({ pool: row.pool, state: row.state }, row.connections);
  databasePoolSize.set(poolSize);
}

export interface MetricsSource {
  sql: Sql;
  poolSize: number;
  /** Whether this process shows the deployment's queue (API processes do; workers show only their own work). */
  queue: boolean;
}

const databaseReadFailures = new Counter({
  name: 'afterimage_metrics_database_failures_total',
  help: 'Scrapes whose database figures (queue, checks due, connections) could not be read: they are left out of that scrape',
  registers: [processRegistry],
});

/** One scrape in the Prometheus text format. With the database gone, the process's own figures are still answered. */
export async function scrapeMetrics(source: MetricsSource): Promise<string> {
  collectProcessMetrics();
  try {
    await Promise.all([source.queue ? readQueue(source.sql) : undefined, readConnections(source.sql, source.poolSize)]);
  } catch {
    for (const gauge of [jobsQueued, oldestWaiting, checksDueNow, databaseConnections]) gauge.reset();
    databaseReadFailures.inc();
  }
  const own = await processRegistry.metrics();
  return source.queue ? `${own}\n${await queueRegistry.metrics()}` : own;
}
