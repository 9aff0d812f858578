import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that run long on waits (real services, their clusters, a browser) and the fuzz, which runs
 * longest. Vitest orders a run without recorded durations (a clean clone, CI) by file size: small files
 * such as test/embedded/start-lock, which kills a postmaster three times, started in the run's last
 * seconds and were still running alone after every other file had ended.
 */
const LONG_RUNNING = /^test\/(fault|embedded|cli|web|demo)\/|^test\/api\/fuzz\.test\.ts$/;

/**
 * Vitest's order, with the long-running files first when any file has no recorded duration; with
 * durations for all (a run before, in this checkout), vitest's longest-first order is better.
 */
export default class LongRunningFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const key = (spec: TestSpecification) => `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
    if (sorted.every((spec) => this.ctx.cache.getFileTestResults(key(spec)))) return sorted;
    const rank = (spec: TestSpecification) => (LONG_RUNNING.test(relative(this.ctx.config.root, spec.moduleId)) ? 0 : 1);
    // Stable: within a group and a project, vitest's order among the long-running files and among the others.
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort(
        (a, b) =>
          a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder ||
          (a.spec.project.name === b.spec.project.name ? 0 : a.index - b.index) ||
          rank(a.spec) - rank(b.spec) ||
          a.index - b.index,
      )
      .map(({ spec }) => spec);
  }
}
