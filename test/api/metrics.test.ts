import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchText } from '../../core/sources/http.ts';
import { openEventStream } from '../../api/sse/writer.ts';
import { eventually } from '../support/cli.ts';
import { upstreamFor } from '../../core/sources/upstream.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addJob, runJobsOnce } from '../support/jobs.ts';
import { parsePrometheus, sampleValue, type Family } from '../support/prometheus.ts';

// GET /metrics: off without METRICS_TOKEN, bearer-guarded with it, read with a strict text-format parser.

const TOKEN = 'metrics-token-0123456789abcdef';
let db: TestDatabase;
let api: TestApi;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql, { METRICS_TOKEN: TOKEN });
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

async function scrape(): Promise<Map<string, Family>> {
  const response = await fetch(`${api.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await response.text());
}

describe('GET /metrics', () => {
  it('is a path like any unknown one without METRICS_TOKEN', async () => {
    const plain = await startTestApi(db.sql);
    try {
      const response = await plain.call('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    } finally {
      await plain.close();
    }
  });

  it('answers 401 in the error envelope without the token or with another', async () => {
    const attempts: Array<Record<string, string>> = [{}, { Authorization: 'Bearer not-the-token-at-all' }, { Authorization: TOKEN }];
    for (const headers of attempts) {
      const response = await api.call('/metrics', { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(response.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/METRICS_TOKEN/) });
    }
  });

  it('names every metric with its type, in the strict text format', async () => {
    const families = await scrape();
    const types = Object.fromEntries([...families.values()].map((family) => [family.name, family.type]));
    expect(types).toMatchObject({
      afterimage_http_requests_total: 'counter',
      afterimage_http_request_duration_seconds: 'histogram',
      afterimage_sse_connections: 'gauge',
      afterimage_jobs: 'gauge',
      afterimage_job_oldest_waiting_seconds: 'gauge',
      afterimage_job_duration_seconds: 'histogram',
      afterimage_job_failures_total: 'counter',
      afterimage_videos_crawled_total: 'counter',
      afterimage_status_checks_total: 'counter',
      afterimage_status_checks_due: 'gauge',
      afterimage_source_requests_total: 'counter',
      afterimage_source_request_errors_total: 'counter',
      afterimage_webhook_attempts_total: 'counter',
      afterimage_db_connections: 'gauge',
      afterimage_db_pool_size: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
      process_resident_memory_bytes: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
    });
    for (const family of families.values()) expect(family.help, family.name).not.toBe('');
  });

  it('counts requests by route pattern and status, never by raw path', async () => {
    const before = await scrape();
    const labels = { method: 'GET', route: '/api/videos/:videoId/status-history', status: '401' };
    for (const id of ['dQw4w9WgXcQ', 'aaaaaaaaaaa']) expect((await api.call(`/api/videos/${id}/status-history`)).status).toBe(401);
    const after = await scrape();
    expect(
      sampleValue(after, 'afterimage_http_requests_total', labels) - sampleValue(before, 'afterimage_http_requests_total', labels),
    ).toBe(2);
    const durations = { method: 'GET', route: labels.route };
    expect(
      sampleValue(after, 'afterimage_http_request_duration_seconds_count', durations) -
        sampleValue(before, 'afterimage_http_request_duration_seconds_count', durations),
    ).toBe(2);
    const routes = after.get('afterimage_http_requests_total')!.samples.map((sample) => sample.labels.route);
    expect(routes.some((route) => route?.includes('dQw4w9WgXcQ'))).toBe(false);
  });

  it('shows the queue by task and the checks due, from the database', async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await addJob(db.sql, 'cleanup');
    await addJob(db.sql, 'cleanup');
    await db.sql`update graphile_worker._private_jobs set run_at = now() - interval '90 seconds'`;
    const families = await scrape();
    expect(sampleValue(families, 'afterimage_jobs', { task: 'cleanup', state: 'waiting' })).toBe(2);
    expect(sampleValue(families, 'afterimage_job_oldest_waiting_seconds', { task: 'cleanup' })).toBeGreaterThanOrEqual(90);
    const [due] = await db.sql<{ due: number }[]>`select count(*)::int as due from video_checks where next_check_at <= now()`;
    expect(sampleValue(families, 'afterimage_status_checks_due')).toBe(due!.due);
    expect(sampleValue(families, 'afterimage_db_pool_size')).toBe(api.config.DATABASE_POOL_SIZE);
  });

  it('times jobs by task and outcome and counts their failures', async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    const before = await scrape();
    await addJob(db.sql, 'cleanup');
    await addJob(db.sql, 'check_status'); // no video ids: its payload is refused, the run fails
    await runJobsOnce(db.url, db.sql);
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('afterimage_job_duration_seconds_count', { task: 'cleanup', outcome: 'ok' })).toBe(1);
    expect(moved('afterimage_job_duration_seconds_count', { task: 'check_status', outcome: 'error' })).toBe(1);
    expect(moved('afterimage_job_failures_total', { task: 'check_status' })).toBe(1);
    expect(moved('afterimage_job_failures_total', { task: 'cleanup' })).toBe(0);
    expect(sampleValue(after, 'afterimage_jobs', { task: 'check_status', state: 'scheduled' })).toBe(1); // its retry
  });

  it('counts source requests and errors by source and status code', async () => {
    const upstream: Server = createServer((req, res) => {
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'Content-Type': 'text/plain' });
      res.end('ok');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    try {
      const wayback = upstreamFor('wayback', [origin]);
      const before = await scrape();
      await fetchText(wayback, `${origin}/found`);
      await fetchText(wayback, `${origin}/missing`).catch(() => undefined);
      const after = await scrape();
      const moved = (name: string, status: string) =>
        sampleValue(after, name, { source: 'wayback', status }) - sampleValue(before, name, { source: 'wayback', status });
      expect(moved('afterimage_source_requests_total', '200')).toBe(1);
      expect(moved('afterimage_source_requests_total', '404')).toBe(1);
      expect(moved('afterimage_source_request_errors_total', '404')).toBe(1);
      expect(moved('afterimage_source_request_errors_total', '200')).toBe(0);
    } finally {
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('counts the event streams open now', async () => {
    // The API's own stream writer, behind a server of its own: one stream opened, then left by its client.
    const streams: Server = createServer((_req, res) => void openEventStream(res, 15, new Set(), () => {}));
    await new Promise<void>((resolve) => streams.listen(0, '127.0.0.1', resolve));
    const open = () => scrape().then((families) => sampleValue(families, 'afterimage_sse_connections'));
    try {
      const before = await open();
      const client = new AbortController();
      const response = await fetch(`http://127.0.0.1:${(streams.address() as AddressInfo).port}/`, { signal: client.signal });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await open()).toBe(before + 1);
      client.abort();
      await eventually(async () => (await open()) === before, 'the stream counted as closed');
    } finally {
      streams.closeAllConnections();
      await new Promise((resolve) => streams.close(resolve));
    }
  });
});
