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
 * When any file has no recorded duration: the long-running files one in two from the start, the others
 * between them in vitest's order, so the last seconds hold short files, and three long-running files at
 * once do not leave a core idle on their waits. With durations for all (a run before, in this checkout),
 * vitest's longest-first order is better.
 */
export default class LongRunningSpread extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (spec: TestSpecification) => relative(this.ctx.config.root, spec.moduleId);
    if (sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`))) return sorted;
    // Vitest's order keeps each project's files together, a later groupOrder after: spread within each.
    const projects = new Map<string, TestSpecification[]>();
    for (const spec of sorted) projects.set(spec.project.name, [...(projects.get(spec.project.name) ?? []), spec]);
    return [...projects.values()].flatMap((specs) => {
      const long = specs.filter((spec) => LONG_RUNNING.test(path(spec)));
      const others = specs.filter((spec) => !LONG_RUNNING.test(path(spec)));
      return Array.from({ length: Math.max(long.length, others.length) }, (_, at) => [long[at], others[at]])
        .flat()
        .filter((spec) => spec !== undefined);
    });
  }
}
