import { defineConfig } from 'vitest/config';

/** Files that kill -9 real processes and time their recovery: they run last, one at a time, on an otherwise idle machine. */
const ISOLATED = ['test/fault/**/*.test.ts'];

/** What every project shares (the root's globalSetup runs once for the whole run and provides to every project). */
const shared = {
  setupFiles: ['test/support/conformance-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        // Each file gets its own database cloned from a migrated template, so files run side by side safely.
        test: { ...shared, name: 'parallel', include: ['test/**/*.test.ts'], exclude: ISOLATED, maxWorkers: 3 },
      },
      {
        // A project of one worker with the default groupOrder runs after every other group (vitest's groupSpecs).
        test: { ...shared, name: 'isolated', include: ISOLATED, fileParallelism: false },
      },
    ],
  },
});
