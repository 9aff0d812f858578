import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * CPU time and memory, from /proc on Linux: one process, the whole machine, and every process of one
 * PostgreSQL server (the postmaster and its children). Elsewhere only this process's own time is known.
 */

const TICK_US = 10_000; // USER_HZ is 100 on every Linux that Node supports

/** Forgets a process's peak RSS so far (writing 5 to its clear_refs resets VmHWM, Linux ≥ 4.0): false where not allowed. */
export function resetPeak(pid: number = process.pid): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Resident memory of a process from /proc/<pid>/status, in MiB: now (VmRSS) and its peak (VmHWM). */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used so far, in µs; undefined once it is gone. */
export function cpuOf(pid: number): number | undefined {
  const times = processTimes(String(pid));
  return times && times.ticks * TICK_US;
}

/** Samples a process's RSS every `everyMs` (VmHWM alone misses when the peak happened). */
export function memorySampler(pid: number, everyMs = 200) {
  const samples: Array<{ at: number; rssMiB: number }> = [];
  const take = () => {
    const memory = memoryOf(pid);
    if (memory) samples.push({ at: performance.now(), rssMiB: memory.rssMiB });
  };
  take();
  const timer = setInterval(take, everyMs);
  timer.unref();
  return {
    samples,
    /** Highest sampled RSS at or after `since` (performance.now() time), MiB. */
    maxSince(since = 0): number {
      let max = Number.NaN;
      for (const sample of samples) if (sample.at >= since && !(sample.rssMiB <= max)) max = sample.rssMiB;
      return max;
    },
    stop() {
      take();
      clearInterval(timer);
    },
  };
}

export interface CpuSnapshot {
  at: number;
  /** This process (user + system), in µs. */
  selfUs: number;
  /** Busy time of all CPUs (everything but idle and iowait), in µs; null without /proc/stat. */
  machineBusyUs: number | null;
  /** The PostgreSQL server's processes, µs by pid; null when it is not a process of this machine. */
  postgres: Map<number, number> | null;
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

/** pid, parent pid and user + system ticks from /proc/<pid>/stat. */
function processTimes(pid: string): { ppid: number; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3 of stat), so field N is fields[N - 3]
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** The postmaster's pid, from the pid of one of its backends; undefined when not visible here. */
export function postmasterOf(backendPid: number): number | undefined {
  const backend = processTimes(String(backendPid));
  return backend && backend.ppid > 1 ? backend.ppid : undefined;
}

/** µs of CPU per process of the server (the postmaster and its children), by pid. */
function postgresTimes(postmaster: number | undefined): Map<number, number> | null {
  if (postmaster === undefined) return null;
  const times = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const proc = processTimes(entry);
    if (proc && (Number(entry) === postmaster || proc.ppid === postmaster)) times.set(Number(entry), proc.ticks * TICK_US);
  }
  return times.size ? times : null;
}

export function cpuSnapshot(postmaster?: number): CpuSnapshot {
  const self = process.cpuUsage();
  return { at: performance.now(), selfUs: self.user + self.system, machineBusyUs: machineBusyUs(), postgres: postgresTimes(postmaster) };
}

export interface CpuDelta {
  seconds: number;
  selfUs: number;
  machineBusyUs: number | null;
  postgresUs: number | null;
}

export function cpuDelta(start: CpuSnapshot, end: CpuSnapshot): CpuDelta {
  let postgresUs: number | null = null;
  if (start.postgres && end.postgres) {
    // Per process, so that one ending in between (an autovacuum worker, a closed session) cannot
    // make the sum go backwards; a process started in between counts from zero. The work of one that
    // ended in between is missed.
    postgresUs = 0;
    for (const [pid, us] of end.postgres) postgresUs += Math.max(0, us - (start.postgres.get(pid) ?? 0));
  }
  return {
    seconds: (end.at - start.at) / 1000,
    selfUs: end.selfUs - start.selfUs,
    machineBusyUs: start.machineBusyUs === null || end.machineBusyUs === null ? null : end.machineBusyUs - start.machineBusyUs,
    postgresUs,
  };
}
