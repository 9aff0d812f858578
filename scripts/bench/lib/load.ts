import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { percentile, round } from './stats.ts';
import { type CpuDelta, cpuDelta, cpuSnapshot } from './usage.ts';

export interface LoadRequest {
  url: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  headers?: Record<string, string>;
}

interface LoadReport {
  requests: number;
  /** 2xx answers a second; latencies in ms over them. */
  requestsPerSecond: number;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p90: number; p99: number; max: number };
}

type ClientMessage =
  | { type: 'measure-start' | 'measure-end' }
  | { type: 'report'; report: LoadReport }
  | { type: 'failed'; message: string };

export interface LoadOutcome {
  report: LoadReport;
  /** CPU of the measured window: this (server) process, the machine, PostgreSQL. */
  cpu: CpuDelta;
  /** What `mark` read at the start and end of the measured window (e.g. the WAL position). */
  marks: { start: unknown; end: unknown };
}

/**
 * autocannon against `request.url` in a child process (this module again), so that it never shares an event loop with
 * the server under test, with CPU snapshots and `mark` (e.g. the WAL position) read exactly around its measured window.
 */
export function runLoad(request: LoadRequest, options: { postmaster?: number; mark?: () => Promise<unknown> } = {}): Promise<LoadOutcome> {
  const mark = options.mark ?? (async () => undefined);
  const child = fork(fileURLToPath(import.meta.url), ['load-client'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let start: { cpu: ReturnType<typeof cpuSnapshot>; mark: Promise<unknown> } | undefined;
    let end: Promise<{ cpu: CpuDelta; mark: unknown }> | undefined;
    const fail = (error: Error) => {
      child.kill();
      reject(error);
    };
    child.on('message', (message: ClientMessage) => {
      if (message.type === 'measure-start') start = { cpu: cpuSnapshot(options.postmaster), mark: mark() };
      else if (message.type === 'measure-end') {
        const snapshot = cpuSnapshot(options.postmaster);
        end = mark().then((value) => ({ cpu: cpuDelta(start!.cpu, snapshot), mark: value }));
      } else if (message.type === 'report' && start && end) {
        const marks = Promise.all([start.mark, end]);
        marks.then(([first, last]) => resolve({ report: message.report, cpu: last.cpu, marks: { start: first, end: last.mark } }), fail);
      } else
        fail(new Error(message.type === 'failed' ? `the load client failed: ${message.message}` : 'the load client reported too early'));
    });
    child.once('error', fail);
    // Its last message may still be on its way; after that, silence is a failure (a settled promise ignores it).
    child.once('exit', (code, signal) =>
      setTimeout(() => fail(new Error(`the load client exited (${signal ?? code}) without reporting`)), 2_000),
    );
    child.send(request);
  });
}

/** The child's side: a warm-up, then the measurement, latencies kept per answer in fractional ms (autocannon's histogram rounds). */
async function generateLoad(request: LoadRequest): Promise<LoadReport> {
  const send = (message: ClientMessage) => new Promise<void>((done) => process.send!(message, () => done()));
  const cannon = (seconds: number, onResponse: (status: number, ms: number) => void = () => undefined) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      const options = {
        url: request.url,
        connections: request.connections,
        duration: seconds,
        timeout: 10,
        headers: request.headers ?? {},
      };
      autocannon(options, (error, result) => (error ? reject(error) : resolve(result))).on('response', (_client, status, _bytes, ms) =>
        onResponse(status, ms),
      );
    });
  if (request.warmupSeconds > 0) await cannon(request.warmupSeconds);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  await send({ type: 'measure-start' });
  const started = performance.now();
  const result = await cannon(request.durationSeconds, (status, ms) => {
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status >= 200 && status <= 299) latencies.push(ms);
  });
  const seconds = (performance.now() - started) / 1000;
  await send({ type: 'measure-end' });
  const sorted = Float64Array.from(latencies).sort();
  const requests = Object.values(statusCodes).reduce((total, n) => total + n, 0);
  const { errors, timeouts } = result;
  const latency = { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: percentile(sorted, 100) };
  return { requests, requestsPerSecond: sorted.length / seconds, statusCodes, non2xx: requests - sorted.length, errors, timeouts, latency };
}

if (process.argv[2] === 'load-client' && process.send) {
  process.once('message', (request: LoadRequest) =>
    generateLoad(request)
      .then((report): ClientMessage => ({ type: 'report', report }))
      .catch(
        (error: unknown): ClientMessage => ({
          type: 'failed',
          message: error instanceof Error ? (error.stack ?? error.message) : String(error),
        }),
      )
      .then((message) => process.send!(message, () => process.disconnect())),
  );
}

/** What a closed loop of calls measured: latencies (ms, in completion order), errors, wall time. */
export interface Sample {
  latencies: number[];
  /** Latencies by `i % variants` of the call. */
  byVariant: number[][];
  errors: number;
  /** The first few error messages. */
  errorMessages: Set<string>;
  /** Bytes the calls answered with (a call may return its response's size). */
  bytes: number;
  seconds: number;
  slowest: { call: number; ms: number };
}

export const newSample = (): Sample => ({
  latencies: [],
  byVariant: [],
  errors: 0,
  errorMessages: new Set(),
  bytes: 0,
  seconds: 0,
  slowest: { call: -1, ms: 0 },
});

/**
 * Keeps `clients` calls in flight in this process until `count` are done or `seconds` have passed; call i
 * gets its sequence number; a failure counts as an error (and its time as a latency). Samples add up.
 */
export async function drive(
  call: (i: number) => Promise<unknown>,
  options: { clients: number; seconds: number; count?: number; variants?: number },
  sample: Sample = newSample(),
): Promise<Sample> {
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const count = options.count ?? Number.POSITIVE_INFINITY;
  let next = 0;
  const client = async () => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      const begun = performance.now();
      try {
        const bytes = await call(i);
        if (typeof bytes === 'number') sample.bytes += bytes;
      } catch (error) {
        sample.errors += 1;
        if (sample.errorMessages.size < 3) sample.errorMessages.add((error as Error).message.slice(0, 200));
      }
      const ms = performance.now() - begun;
      sample.latencies.push(ms);
      (sample.byVariant[i % (options.variants ?? 1)] ??= []).push(ms);
      if (ms > sample.slowest.ms) sample.slowest = { call: i, ms };
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  sample.seconds += (performance.now() - started) / 1000;
  return sample;
}

export interface RequestStats {
  requests: number;
  errors: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  qps: number | null;
}

/** Samples taken together: latency percentiles in ms rounded to `digits`, requests a second. */
export function requestStats(samples: Sample[], digits: number): RequestStats {
  const latencies = Float64Array.from(samples.flatMap((sample) => sample.latencies)).sort();
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  const at = (p: number) => round(percentile(latencies, p), digits);
  const errors = samples.reduce((sum, sample) => sum + sample.errors, 0);
  return { requests: latencies.length, errors, p50: at(50), p95: at(95), p99: at(99), qps: round(latencies.length / seconds, 0) };
}
