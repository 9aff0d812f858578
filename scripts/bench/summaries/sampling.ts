import { Agent, request as httpRequest } from 'node:http';
import { drive, newSample, type RequestStats, requestStats, type Sample } from '../lib/load.ts';
import { round } from '../lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot } from '../lib/usage.ts';
import { CLIENTS } from './shape.ts';

interface Cpu {
  selfUs: number;
  postgresUs: number | null;
  apiUs: number | null;
  machineUs: number | null;
}
interface MeasuredSample extends Sample {
  cpu: Cpu;
}
export const newMeasuredSample = (): MeasuredSample => ({ ...newSample(), cpu: { selfUs: 0, postgresUs: 0, apiUs: 0, machineUs: 0 } });

/** Keeps `clients` calls in flight, variants in turn, until `count` are done or `seconds` have passed; a call may answer with the bytes it read. */
export const driveVariants = (
  call: (variant: number) => Promise<unknown>,
  variants: number,
  options: { count: number; seconds: number; clients: number },
  sample?: Sample,
) => drive((i) => call(i % variants), { ...options, variants }, sample);

/** `drive` with the CPU that this process, PostgreSQL, the API process and the whole machine used meanwhile added to the sample. */
export async function driveMeasured(
  call: (variant: number) => Promise<unknown>,
  variants: number,
  options: { count: number; seconds: number; clients: number },
  sample: MeasuredSample,
  processes: { postmaster: number | undefined; api: number },
) {
  const add = (a: number | null, b: number | null | undefined) => (a === null || b === null || b === undefined ? null : a + b);
  const start = cpuSnapshot(processes.postmaster);
  const apiStart = cpuOf(processes.api);
  await driveVariants(call, variants, options, sample);
  const delta = cpuDelta(start, cpuSnapshot(processes.postmaster));
  const apiEnd = cpuOf(processes.api);
  sample.cpu.selfUs += delta.selfUs;
  sample.cpu.postgresUs = add(sample.cpu.postgresUs, delta.postgresUs);
  sample.cpu.apiUs = add(sample.cpu.apiUs, apiStart === undefined || apiEnd === undefined ? null : apiEnd - apiStart);
  sample.cpu.machineUs = add(sample.cpu.machineUs, delta.machineBusyUs);
}

export interface Stats extends RequestStats {
  /** CPU per request, µs: this process (the caller: in process the query function and postgres.js, over HTTP the client), the API process, PostgreSQL. */
  cpuUs: { self: number | null; api: number | null; postgres: number | null };
  /** Cores busy with something else meanwhile (other processes of the machine): a disturbance gauge. */
  otherCores: number | null;
  kilobytesPerResponse: number | null;
}
export function stats(sample: MeasuredSample): Stats {
  const n = Math.max(1, sample.latencies.length);
  const { selfUs, postgresUs, apiUs, machineUs } = sample.cpu;
  const perRequest = (us: number | null) => (us === null ? null : round(us / n, 0));
  return {
    ...requestStats([sample], 2),
    cpuUs: { self: perRequest(selfUs), api: perRequest(apiUs), postgres: perRequest(postgresUs) },
    otherCores:
      machineUs === null || postgresUs === null || apiUs === null
        ? null
        : round(Math.max(0, machineUs - selfUs - postgresUs - apiUs) / (sample.seconds * 1e6), 2),
    kilobytesPerResponse: sample.bytes ? round(sample.bytes / n / 1024, 1) : null,
  };
}

/** GET `path` on the API; resolves with the status and body once the whole body is in. */
export function httpGetter(baseUrl: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const { hostname, port } = new URL(baseUrl);
  return {
    get(path: string): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = httpRequest({ agent, hostname, port, path }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    },
    close: () => agent.destroy(),
  };
}
