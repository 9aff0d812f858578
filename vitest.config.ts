import { defineConfig } from 'vitest/config';
import LongRunningSpread from './test/support/sequencer.ts';

/**
 * Files that kill -9 a postmaster of their own under real services and time the recovery: they run last, on an
 * otherwise idle machine. The other fault files (a worker killed mid-crawl, a held transaction, an
 * unmounted store, the circuit, an import killed half-way, two API processes) time nothing and run with the rest.
 */
const ISOLATED = ['test/fault/worker-restart.test.ts', 'test/fault/db-outage.test.ts'];

/** What every project shares (the root's globalSetup runs once for the whole run and provides to every project). */
const shared = {
  setupFiles: ['test/support/conformance-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  // Password hashes at 1/32 of the production cost (a password test checks the default): at OWASP's, each
  // sign-in, registration and password change of the suite took a third of a second of a core.
  env: { PASSWORD_HASH_COST: '10' },
};

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    sequence: { sequencer: LongRunningSpread },
    projects: [
      {
        // Each file gets its own database cloned from a migrated template, so files run side by side safely.
        // Not isolated: each of the three forks loads the modules once for all its files, which cut this
        // project's CPU by a third (loading them again for every file was 226 of its 900 test-seconds); a
        // file restores any process-wide state it changes (environment, globals, listeners).
        test: { ...shared, name: 'parallel', include: ['test/**/*.test.ts'], exclude: ISOLATED, maxWorkers: 3, isolate: false },
      },
      {
        // A later groupOrder runs after every file of the first group has ended (vitest's groupSpecs). The two side by
        // side, each with its own cluster, recover in 0.1–0.3 s (db-outage) and 2–4 s (worker-restart), as they do
        // alone; the 3,000-video crawl of processes.test.ts beside worker-restart once left a crawl unfinished after
        // 60 s, and that file now runs with the parallel group, which has ended by then.
        test: { ...shared, name: 'isolated', include: ISOLATED, maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
