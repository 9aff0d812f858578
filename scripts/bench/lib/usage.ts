import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** CPU time and memory from /proc (Linux): one process, the whole machine, and one PostgreSQL server's processes. */

const TICK_US = 10_000; // USER_HZ is 100 on every Linux that Node supports

/** Forgets a process's peak RSS so far (VmHWM; Linux ≥ 4.0): false where not allowed. */
export function resetPeak(pid: number = process.pid): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** A process's resident memory in MiB: now (VmRSS) and its peak (VmHWM). */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** pid, parent pid and user + system ticks from /proc/<pid>/stat. */
function processTimes(pid: string): { ppid: number; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's closing parenthesis: field 3 (state) first, so field N is at N - 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used so far, µs; undefined once it is gone. */
export function cpuOf(pid: number): number | undefined {
  const times = processTimes(String(pid));
  return times && times.ticks * TICK_US;
}

/** The postmaster's pid from one of its backends'; undefined when it is not a process of this machine. */
export function postmasterOf(backendPid: number): number | undefined {
  const backend = processTimes(String(backendPid));
  return backend && backend.ppid > 1 ? backend.ppid : undefined;
}

/** A process's RSS sampled every `everyMs`: VmHWM alone does not say when the peak was. */
export function memorySampler(pid: number, everyMs = 200) {
  const samples: Array<{ at: number; rssMiB: number }> = [];
  const take = () => {
    const memory = memoryOf(pid);
    if (memory) samples.push({ at: performance.now(), rssMiB: memory.rssMiB });
  };
  take();
  const timer = setInterval(take, everyMs).unref();
  return {
    samples,
    /** The highest RSS sampled at or after `since` (a performance.now() time), MiB. */
    maxSince: (since = 0) =>
      samples.reduce((max, { at, rssMiB }) => (at >= since && rssMiB > max ? rssMiB : max), Number.NEGATIVE_INFINITY),
    stop() {
      take();
      clearInterval(timer);
    },
  };
}

function machineBusyUs(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) * TICK_US;
  } catch {
    return null;
  }
}

/** µs of CPU by pid of the postmaster and its children; null when they are not visible here. */
function postgresTimes(postmaster: number | undefined): Map<number, number> | null {
  if (postmaster === undefined) return null;
  const times = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const proc = /^\d+$/.test(entry) ? processTimes(entry) : undefined;
    if (proc && (Number(entry) === postmaster || proc.ppid === postmaster)) times.set(Number(entry), proc.ticks * TICK_US);
  }
  return times.size ? times : null;
}

export function cpuSnapshot(postmaster?: number) {
  const self = process.cpuUsage();
  return { at: performance.now(), selfUs: self.user + self.system, machineBusyUs: machineBusyUs(), postgres: postgresTimes(postmaster) };
}

export interface CpuDelta {
  seconds: number;
  /** This process. */
  selfUs: number;
  /** All CPUs but idle and iowait. */
  machineBusyUs: number | null;
  postgresUs: number | null;
}

export function cpuDelta(start: ReturnType<typeof cpuSnapshot>, end: ReturnType<typeof cpuSnapshot>): CpuDelta {
  let postgresUs: number | null = null;
  if (start.postgres && end.postgres) {
    // Per process, so that a backend ending in between cannot make the sum go backwards (its work is missed).
    postgresUs = 0;
    for (const [pid, us] of end.postgres) postgresUs += Math.max(0, us - (start.postgres.get(pid) ?? 0));
  }
  const machine = start.machineBusyUs === null || end.machineBusyUs === null ? null : end.machineBusyUs - start.machineBusyUs;
  return { seconds: (end.at - start.at) / 1000, selfUs: end.selfUs - start.selfUs, machineBusyUs: machine, postgresUs };
}
