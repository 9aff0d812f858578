/**
 * Which afterimage services run on this machine, and on which database: each service process
 * leaves a file `<pid>.json` in a per-user folder while it runs ($XDG_RUNTIME_DIR/afterimage/services,
 * else <tmp>/afterimage-<uid>/services), so an operator command can tell when it is about to
 * write into a database no running service reads. A file left by a process that died is ignored
 * and removed.
 */
import { unlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
}

function registryDir(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return runtime ? join(runtime, 'afterimage', 'services') : join(tmpdir(), `afterimage-${userInfo().uid}`, 'services');
}

/** Records this process as a running service until it exits; answers the function that removes the record sooner. */
export async function registerService(role: string, database: DatabaseLocation): Promise<() => void> {
  const dir = registryDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${process.pid}.json`);
  const service: RunningService = { pid: process.pid, role, startedAt: new Date().toISOString(), database };
  await writeFile(file, JSON.stringify(service));
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
  return remove;
}

/** The services running now (this process excluded). */
export async function runningServices(): Promise<RunningService[]> {
  const dir = registryDir();
  const names = await readdir(dir).catch(() => [] as string[]);
  const services: RunningService[] = [];
  for (const name of names) {
    const pid = Number(/^(\d+)\.json$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    if (!processAlive(pid)) {
      await rm(join(dir, name), { force: true });
      continue;
    }
    const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
    try {
      if (text) services.push(JSON.parse(text) as RunningService);
    } catch {
      // being written right now: that service is still starting
    }
  }
  return services.sort((a, b) => a.pid - b.pid);
}
