import { defineConfig } from 'vitest/config';

/**
 * Files that kill -9 real processes (a worker, the postmaster) and time their recovery: they run last, one at a
 * time, on an otherwise idle machine. The other fault files (a held transaction, an unmounted store, the circuit,
 * an import killed half-way, two API processes) time nothing and run with the rest.
 */
const ISOLATED = ['test/fault/processes.test.ts', 'test/fault/worker-restart.test.ts', 'test/fault/db-outage.test.ts'];

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
        // Not isolated: each of the three forks loads the modules once for all its files, which cut this
        // project's CPU by a third (loading them again for every file was 226 of its 900 test-seconds); a
        // file restores any process-wide state it changes (environment, globals, listeners).
        test: { ...shared, name: 'parallel', include: ['test/**/*.test.ts'], exclude: ISOLATED, maxWorkers: 3, isolate: false },
      },
      {
        // A later groupOrder runs after every file of the first group has ended (vitest's groupSpecs). One at a
        // time: two at once (processes beside worker-restart) left a restarted cluster's crawl unfinished after 60 s.
        test: { ...shared, name: 'isolated', include: ISOLATED, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
