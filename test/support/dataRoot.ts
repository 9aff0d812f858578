import { createHash } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = fileURLToPath(new URL('../../', import.meta.url));
/** Room the clusters take at most at once: the run's own and a few that test files start, about 100 MB each. */
const ROOM_NEEDED = 2 * 2 ** 30;
const IN_MEMORY = '/dev/shm';

/**
 * Where the tests' PostgreSQL clusters live, chosen once by the global set-up: TEST_DATA_DIR, else a folder
 * of this checkout's in memory (/dev/shm) when there is room, else .afterimage-test. Every test file clones a
 * database and many start a cluster of their own: on disk, making a database's thousand files cost 0.2 s of
 * kernel CPU under the suite's load (26 CPU-seconds a run), in memory 0.02 s. They hold nothing worth a crash.
 */
export function chooseTestDataRoot(): string {
  if (process.env.TEST_DATA_DIR) return resolve(process.env.TEST_DATA_DIR);
  return inMemory() ?? join(checkout, '.afterimage-test');
}

/** This checkout's folder on /dev/shm, named for its path so that two checkouts never share a cluster; undefined without the room. */
function inMemory(): string | undefined {
  try {
    const shm = statfsSync(IN_MEMORY);
    if (shm.bavail * shm.bsize < ROOM_NEEDED) return undefined;
  } catch {
    return undefined;
  }
  return join(IN_MEMORY, `afterimage-test-${createHash('sha256').update(checkout).digest('hex').slice(0, 12)}`);
}

/** Whether `root` is in memory, which the last run out gives back. */
export const inMemoryRoot = (root: string) => root.startsWith(`${IN_MEMORY}/`);
