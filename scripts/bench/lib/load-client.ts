/**
 * The load generator, run as a child process by load.ts so that it never shares an event loop
 * with the server under test. It takes one LoadRequest over IPC, runs autocannon for the warm-up
 * (results discarded), says 'measure-start', runs it again for the measurement, says
 * 'measure-end', and sends a LoadReport. Latencies are recorded per response, in fractional
 * milliseconds (autocannon's own histogram rounds to whole milliseconds).
 */
import autocannon from 'autocannon';
import { percentile } from './stats.ts';

export interface LoadRequest {
  url: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  headers?: Record<string, string>;
  /** One set of headers per connection, in turn (e.g. a different API key on each). */
  headersPerConnection?: Array<Record<string, string>>;
}

export interface LoadReport {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** ms, over 2xx responses */
  latency: { mean: number; p50: number; p90: number; p99: number; p999: number; max: number };
  /** CPU time of this load-generating process during the measurement, µs */
  clientCpuUs: number;
}

export type ClientMessage =
  | { type: 'measure-start' }
  | { type: 'measure-end' }
  | { type: 'report'; report: LoadReport }
  | { type: 'failed'; message: string };

const send = (message: ClientMessage) => new Promise<void>((done) => process.send!(message, () => done()));

function run(request: LoadRequest, seconds: number, onResponse?: (status: number, ms: number) => void) {
  let connection = 0;
  const perConnection = request.headersPerConnection;
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: request.url,
        connections: request.connections,
        duration: seconds,
        timeout: 10,
        headers: request.headers ?? {},
        ...(perConnection?.length
          ? {
              setupClient: (client: autocannon.Client) =>
                client.setHeaders({ ...request.headers, ...perConnection[connection++ % perConnection.length] }),
            }
          : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    if (onResponse) instance.on('response', (_client, status, _bytes, ms) => onResponse(status, ms));
  });
}

async function measure(request: LoadRequest): Promise<LoadReport> {
  if (request.warmupSeconds > 0) await run(request, request.warmupSeconds);
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const statusCodes: Record<string, number> = {};
  await send({ type: 'measure-start' });
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  const result = await run(request, request.durationSeconds, (status, ms) => {
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status < 200 || status > 299) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  await send({ type: 'measure-end' });

  const sorted = latencies.subarray(0, count).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  const requests = Object.values(statusCodes).reduce((total, n) => total + n, 0);
  return {
    requests,
    seconds,
    requestsPerSecond: count / seconds,
    statusCodes,
    non2xx: requests - count,
    errors: result.errors,
    timeouts: result.timeouts,
    latency: {
      mean: sum / Math.max(count, 1),
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      p999: percentile(sorted, 99.9),
      max: count ? sorted[count - 1]! : Number.NaN,
    },
    clientCpuUs: cpu.user + cpu.system,
  };
}

process.once('message', (request: LoadRequest) => {
  measure(request)
    .then((report) => send({ type: 'report', report }))
    .catch((error: unknown) => send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }))
    .finally(() => process.disconnect());
});
// The parent went away: nothing left to report to.
process.once('disconnect', () => setTimeout(() => process.exit(0), 100).unref());
