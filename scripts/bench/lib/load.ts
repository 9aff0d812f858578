import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuDelta, cpuSnapshot, type CpuDelta } from './cpu.ts';
import type { ClientMessage, LoadReport, LoadRequest } from './load-client.ts';

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
