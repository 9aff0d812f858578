import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuDelta, type CpuDelta, cpuSnapshot } from './usage.ts';
import type { ClientMessage, LoadReport, LoadRequest } from './load-client.ts';
import { percentile, round } from './stats.ts';

const clientScript = fileURLToPath(new URL('./load-client.ts', import.meta.url));

export interface LoadOutcome {
  report: LoadReport;
  /** CPU used during the measured window: this (server) process, the machine, PostgreSQL. */
  cpu: CpuDelta;
  /** What `around` returned at the start and end of the measured window. */
  marks: { start: unknown; end: unknown };
}

/**
 * Runs the load generator in a child process against `request.url`, taking CPU snapshots of this
 * process (the server), the machine and PostgreSQL exactly around the measured window, plus
 * whatever `mark` reads then (e.g. the WAL position).
 */
export function runLoad(request: LoadRequest, options: { postmaster?: number; mark?: () => Promise<unknown> } = {}): Promise<LoadOutcome> {
  const mark = options.mark ?? (async () => undefined);
  return new Promise((resolve, reject) => {
    const child = fork(clientScript, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let start: ReturnType<typeof cpuSnapshot> | undefined;
    let startMark: Promise<unknown> = Promise.resolve(undefined);
    let end: Promise<{ cpu: CpuDelta; mark: unknown }> | undefined;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      child.kill();
      reject(error);
    };
    child.on('message', (message: ClientMessage) => {
      if (message.type === 'measure-start') {
        start = cpuSnapshot(options.postmaster);
        startMark = mark();
      } else if (message.type === 'measure-end') {
        const snapshot = cpuSnapshot(options.postmaster);
        end = mark().then((value) => ({ cpu: cpuDelta(start!, snapshot), mark: value }));
      } else if (message.type === 'report') {
        if (!end) return fail(new Error('the load client reported before its measurement ended'));
        Promise.all([startMark, end]).then(([startValue, finish]) => {
          settled = true;
          resolve({ report: message.report, cpu: finish.cpu, marks: { start: startValue, end: finish.mark } });
        }, fail);
      } else if (message.type === 'failed') {
        fail(new Error(`the load client failed: ${message.message}`));
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      // Its last message may still be on its way; after that, silence is a failure.
      setTimeout(() => fail(new Error(`the load client exited (${signal ?? code}) without reporting`)), 2_000);
    });
    child.send(request);
  });
}

/** What a closed loop of clients measured: latencies (ms, in completion order), errors, wall time. */
export interface Sample {
  latencies: number[];
  /** Latencies by the index of the request (`i % variants`) each call made. */
  byVariant: number[][];
  errors: number;
  /** The first few error messages, for the problems list. */
  errorMessages: Set<string>;
  /** Bytes the calls answered with (a call may return its response's size). */
  bytes: number;
  seconds: number;
  /** The slowest call: its sequence number and time. */
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
 * Keeps `clients` calls in flight, in this process, until `count` calls are done or `seconds` have
 * passed; call i gets its sequence number. A failed call counts as an error (and its time as a latency).
 * Samples add up: pass the same one to several drives.
 */
export async function drive(
  call: (i: number) => Promise<unknown>,
  options: { clients: number; seconds: number; count?: number; variants?: number },
  sample: Sample = newSample(),
): Promise<Sample> {
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const count = options.count ?? Number.POSITIVE_INFINITY;
  const variants = options.variants ?? 1;
  let next = 0;
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
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
        (sample.byVariant[i % variants] ??= []).push(ms);
        if (ms > sample.slowest.ms) sample.slowest = { call: i, ms };
      }
    }),
  );
  sample.seconds += (performance.now() - started) / 1000;
  return sample;
}

/** Requests, errors, latency percentiles (ms, rounded to `digits`) and requests per second of samples taken together. */
export interface RequestStats {
  requests: number;
  errors: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  qps: number | null;
}

export function requestStats(samples: Sample[], digits: number): RequestStats {
  const latencies = samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  return {
    requests: latencies.length,
    errors: samples.reduce((sum, sample) => sum + sample.errors, 0),
    p50: round(percentile(latencies, 50), digits),
    p95: round(percentile(latencies, 95), digits),
    p99: round(percentile(latencies, 99), digits),
    qps: round(latencies.length / seconds, 0),
  };
}
