import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/conformance-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database cloned from a migrated template, so files run in parallel safely.
    pool: 'forks',
    // Files mostly wait (on PostgreSQL, child processes, HTTP): one more fork than cores keeps both busy,
    // where vitest's default (cores - 1) runs a two-core machine's files one at a time.
    maxWorkers: availableParallelism() + 1,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
