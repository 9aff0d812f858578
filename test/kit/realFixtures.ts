/**
 * Where the real fixtures are: recorded answers and files from public repositories, kept beside the
 * repository (../shared/fixtures/real), not in it, and read in place. REAL_FIXTURES_DIR points elsewhere.
 * Tests and benchmarks find them only through here.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export function realFixturesDir(): string {
  const configured = process.env.REAL_FIXTURES_DIR;
  return configured ? resolve(configured) : resolve(repoRoot, '..', 'shared', 'fixtures', 'real');
}

/** The path of one fixture (a file or a folder), given relative to the fixtures folder. */
export const realFixture = (relative: string): string => join(realFixturesDir(), relative);

export const haveRealFixtures = (): boolean => existsSync(realFixturesDir());

/** Why something that needs the fixtures is skipped: the folder looked for and how to point elsewhere. */
export const missingRealFixtures = (what: string): string =>
  `Skipped ${what}: the real fixtures folder ${realFixturesDir()} does not exist (set REAL_FIXTURES_DIR to where they are)`;
