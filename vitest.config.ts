import { defineConfig } from 'vitest/config';
import LongRunningSpread from './test/support/sequencer.ts';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/conformance-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // The order files start in: the long-running ones spread out, the two that kill -9 a postmaster last.
    sequence: { sequencer: LongRunningSpread },
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database cloned from a migrated template, so files run side by side safely.
    // Not isolated: each of the three forks loads the modules once for all its files, which cut the CPU by a
    // third (loading them again for every file was 226 of 900 test-seconds); a file restores any
    // process-wide state it changes (environment, globals, listeners).
    pool: 'forks',
    maxWorkers: 3,
    isolate: false,
    // Password hashes at 1/32 of the production cost (a password test checks the default): at OWASP's, each
    // sign-in, registration and password change of the suite took a third of a second of a core.
    env: { PASSWORD_HASH_COST: '10' },
  },
});
