import { createHash } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = fileURLToPath(new URL('../../', import.meta.url));
/** Room the clusters take at most at once: the run's own and a few that test files start, about 100 MB each. */
const ROOM_NEEDED = 2 * 2 ** 30;

/**
 * Where the tests' PostgreSQL clusters live: TEST_DATA_DIR, else a folder of this checkout's in memory
 * (/dev/shm) when there is room, else .afterimage-test. Every test file clones a database and many start
 * a cluster of their own: on disk, making a database's thousand files cost 0.2 s of kernel CPU under the
 * suite's load (a quarter of a minute of the run's CPU), in memory 0.02 s. They hold nothing worth a crash.
 */
export function testDataRoot(): string {
  if (process.env.TEST_DATA_DIR) return resolve(process.env.TEST_DATA_DIR);
  return inMemory() ?? join(checkout, '.afterimage-test');
}

/** This checkout's folder on /dev/shm, named for its path so that two checkouts never share a cluster; undefined without the room. */
function inMemory(): string | undefined {
  try {
    const shm = statfsSync('/dev/shm');
    if (shm.bavail * shm.bsize < ROOM_NEEDED) return undefined;
  } catch {
    return undefined;
  }
  return `/dev/shm/afterimage-test-${createHash('sha256').update(checkout).digest('hex').slice(0, 12)}`;
}

/** Whether the tests' clusters live in memory, which the last run out gives back. */
export const dataRootInMemory = () => testDataRoot().startsWith('/dev/shm/');
