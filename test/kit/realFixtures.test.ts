import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { describeReal } from './describeReal.ts';
import { haveRealFixtures, missingRealFixtures, realFixture, realFixturesDir } from './realFixtures.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const elsewhere = mkdtempSync(join(tmpdir(), 'afterimage-real-fixtures-'));
const missing = join(elsewhere, 'not-here');

/** Runs `fn` with REAL_FIXTURES_DIR set to `dir` (or unset), as the locator reads it on every call. */
function withFixturesDir<T>(dir: string | undefined, fn: () => T): T {
  const before = process.env.REAL_FIXTURES_DIR;
  if (dir === undefined) delete process.env.REAL_FIXTURES_DIR;
  else process.env.REAL_FIXTURES_DIR = dir;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.REAL_FIXTURES_DIR;
    else process.env.REAL_FIXTURES_DIR = before;
  }
}

// Collected with the folder missing: the suite must be skipped, with exactly one line saying why.
const SKIPPED_SUITE = 'a suite whose fixtures are missing';
const warnings: unknown[][] = [];
withFixturesDir(missing, () => {
  const warn = vi.spyOn(console, 'warn').mockImplementation((...line: unknown[]) => void warnings.push(line));
  try {
    describeReal(SKIPPED_SUITE, () => {});
  } finally {
    warn.mockRestore();
  }
});

afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

describe('the real fixtures locator', () => {
  it('looks beside the repository by default', () => {
    withFixturesDir(undefined, () => {
      expect(realFixturesDir()).toBe(resolve(repoRoot, '..', 'shared', 'fixtures', 'real'));
      expect(realFixture('edgi-wayback/test_search.yaml')).toBe(
        join(resolve(repoRoot, '..', 'shared', 'fixtures', 'real'), 'edgi-wayback', 'test_search.yaml'),
      );
    });
  });

  it('honours REAL_FIXTURES_DIR', () => {
    withFixturesDir(elsewhere, () => {
      expect(realFixturesDir()).toBe(elsewhere);
      expect(realFixture('peace/video_basic.json')).toBe(join(elsewhere, 'peace', 'video_basic.json'));
      expect(haveRealFixtures()).toBe(true);
    });
  });

  it('reports a missing folder: which one, and how to point elsewhere', () => {
    withFixturesDir(missing, () => {
      expect(haveRealFixtures()).toBe(false);
      expect(missingRealFixtures('suite "x"')).toBe(
        `Skipped suite "x": the real fixtures folder ${missing} does not exist (set REAL_FIXTURES_DIR to where they are)`,
      );
    });
  });

  it('skips a suite whose folder is missing, with one line naming it', ({ task }) => {
    expect(warnings).toEqual([[withFixturesDir(missing, () => missingRealFixtures(`suite "${SKIPPED_SUITE}"`))]]);
    const suite = task.file.tasks.find((t) => t.name === SKIPPED_SUITE);
    expect(suite?.mode).toBe('skip');
  });
});
