import type { Reporter, TestModule } from 'vitest/node';

const SLOWEST = 8;

/**
 * Ends the run with one plain "tests: N passed, N failed, N skipped" line that any CI can read, and
 * the slowest files with where their time went (importing, set-up hooks and tests), to see where a
 * run's minutes go.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 };
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) counts.failed += 1;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
      }
    }
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const timed = testModules.map((module) => {
      const d = module.diagnostic();
      return { file: module.relativeModuleId, collect: d.collectDuration + d.setupDuration + d.prepareDuration, run: d.duration };
    });
    const slowest = timed.sort((a, b) => b.collect + b.run - (a.collect + a.run)).slice(0, SLOWEST);
    const lines = slowest.map(
      (t) => `  ${seconds(t.collect + t.run).padStart(7)}  ${t.file} (import and set-up ${seconds(t.collect)}, tests ${seconds(t.run)})`,
    );
    process.stdout.write(`\nslowest files:\n${lines.join('\n')}\n`);
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
