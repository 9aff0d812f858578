/**
 * Which afterimage services run on this machine, and on which database: each service process
 * leaves a file `<pid>.json` in a per-user folder while it runs ($XDG_RUNTIME_DIR/afterimage/services,
 * else <tmp>/afterimage-<uid>/services), so an operator command writes into the database a running
 * service reads. The file holds no secret: DATA_DIR, or DATABASE_URL with its password masked. A
 * file left by a process that died is ignored and removed, also when its pid was given to another
 * process since (the process's start time, where /proc tells it, must match).
 */
import { readFileSync, unlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../processAlive.ts';
import type { DatabaseLocation } from './databaseLocation.ts';

export interface RunningService {
  pid: number;
  /** start, api or worker */
  role: string;
  startedAt: string;
  database: DatabaseLocation;
  /** The ARCHIVE_DIR it reads (absolute). */
  archiveDir?: string;
  /** Where its API listens (api and start), once it does. */
  url?: string;
  /** The process's start in clock ticks since boot (/proc/<pid>/stat), where the system tells it. */
  processStart?: string;
}

/** The start time of a process (field 22 of /proc/<pid>/stat, after the parenthesised command name). */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The process that wrote the record runs still: its pid is alive and, where known, started when it did. */
function stillRunning(service: RunningService): boolean {
  if (!processAlive(service.pid)) return false;
  return service.processStart === undefined || processStart(service.pid) === service.processStart;
}

function registryDir(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return runtime ? join(runtime, 'afterimage', 'services') : join(tmpdir(), `afterimage-${userInfo().uid}`, 'services');
}

export interface ServiceRecord {
  /** Adds where the API listens, once it does. */
  listening(url: string): Promise<void>;
  /** Removes the record before the process exits. */
  remove(): void;
}

/** Records this process as a running service until it exits. */
export async function registerService(role: string, database: DatabaseLocation, archiveDir: string): Promise<ServiceRecord> {
  const dir = registryDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${process.pid}.json`);
  const service: RunningService = { pid: process.pid, role, startedAt: new Date().toISOString(), database, archiveDir };
  const started = processStart(process.pid);
  if (started !== undefined) service.processStart = started;
  // Whole or not at all: a reader never sees half a record.
  const write = async (record: RunningService) => {
    await writeFile(`${file}.tmp`, JSON.stringify(record));
    await rename(`${file}.tmp`, file);
  };
  await write(service);
  // Synchronous: the 'exit' event runs no asynchronous work.
  const remove = () => {
    process.off('exit', remove);
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on('exit', remove);
  return {
    listening: (url) => write({ ...service, url }),
    remove,
  };
}

/** The services running now (this process excluded), oldest first: pids wrap around, start times do not. */
export async function runningServices(): Promise<RunningService[]> {
  const dir = registryDir();
  const names = await readdir(dir).catch(() => [] as string[]);
  const services: RunningService[] = [];
  for (const name of names) {
    const pid = Number(/^(\d+)\.json$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
    let service: RunningService | undefined;
    try {
      if (text) service = JSON.parse(text) as RunningService;
    } catch {
      // unreadable: not a record of ours
    }
    if (!processAlive(pid) || (service && !stillRunning(service))) await rm(join(dir, name), { force: true });
    else if (service) {
      const { processStart: _checked, ...shown } = service;
      services.push(shown);
    }
  }
  return services.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.pid - b.pid);
}
