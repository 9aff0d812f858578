/**
 * `GET /metrics`, the Prometheus text format (core/metrics.ts): on the API's port behind a bearer token
 * (METRICS_TOKEN), or on a listener of its own (METRICS_PORT) that serves nothing else and asks for no
 * token, which is also how a worker process, which has no API, shows its metrics. Not a route of the
 * OpenAPI document: its body is Prometheus's, it is for the operator's scraper, and it passes no
 * quota (a scraper must never be refused for counting).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Sql } from '../../core/db/database.ts';
import { hashToken, sameHash } from '../../core/keys.ts';
import type { Logger } from '../../core/log.ts';
import { METRICS_CONTENT_TYPE, scrapeMetrics, type MetricsSource } from '../../core/metrics.ts';
import { sendError } from '../http/representation.ts';
import type { ApiDeps } from '../http/route.ts';

export const METRICS_PATH = '/metrics';

async function sendMetrics(res: ServerResponse, source: MetricsSource): Promise<void> {
  const body = await scrapeMetrics(source);
  res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The API's `/metrics`, registered only when METRICS_TOKEN is set: `Authorization: Bearer <METRICS_TOKEN>`, else 401. */
export function metricsRoute(deps: Pick<ApiDeps, 'config' | 'sql'>, token: string) {
  const expected = hashToken(token);
  const source = { sql: deps.sql, poolSize: deps.config.DATABASE_POOL_SIZE, queue: true };
  return async (req: IncomingMessage, res: ServerResponse) => {
    const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!given || !sameHash(hashToken(given), expected)) {
      sendError(res, 401, 'UNAUTHORIZED', `${given ? 'wrong' : 'no'} metrics token: send Authorization: Bearer <METRICS_TOKEN>`, {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      });
      return;
    }
    await sendMetrics(res, source);
  };
}

/**
 * A listener on METRICS_PORT that answers `GET /metrics` (no token: the port is the operator's to
 * expose) and the error envelope to anything else. `queue`: whether this process shows the
 * deployment's queue (API processes do).
 */
export async function startMetricsServer(
  options: { sql: Sql; poolSize: number; queue: boolean; port: number; host: string },
  log: Logger,
): Promise<{ port: number; close(): Promise<void> }> {
  const source = { sql: options.sql, poolSize: options.poolSize, queue: options.queue };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) return sendError(res, 404, 'NOT_FOUND', `this port serves only GET ${METRICS_PATH}`);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendError(res, 405, 'NOT_FOUND', `${req.method} is not supported on ${METRICS_PATH}; use GET`, { headers: { Allow: 'GET' } });
    sendMetrics(res, source).catch((error: unknown) => {
      log.warn('metrics scrape failed', { err: error });
      sendError(res, 503, 'SERVICE_UNAVAILABLE', 'the metrics could not be read; try again');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`METRICS_PORT ${options.port} on ${options.host} is already in use: give each process its own METRICS_PORT`)
          : error,
      ),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  log.info('metrics listening', {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}${METRICS_PATH}`,
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
