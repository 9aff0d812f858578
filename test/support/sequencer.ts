import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that run long on waits (real services, their clusters, a browser, a child process that measures
 * its memory) and the fuzz, which runs longest. Vitest orders a run without recorded durations (a clean clone,
 * CI) by file size: small files such as test/embedded/start-lock, which kills a postmaster three times,
 * started in the run's last seconds and were still running alone after every other file had ended.
 */
const LONG_RUNNING = /^test\/(fault|embedded|cli|web|demo)\/|^test\/api\/fuzz\.test\.ts$|^test\/evidence\/export-memory\.test\.ts$/;

/**
 * Files that kill -9 a postmaster of their own under real services and bound the recovery (the API's 503s and
 * its return within 3 s): they start last, when what still runs beside them are the run's short files. The
 * 3,000-video crawl of test/fault/processes beside worker-restart once left a crawl unfinished after 60 s.
 */
const LAST = /^test\/fault\/(worker-restart|db-outage)\.test\.ts$/;

/**
 * When any file has no recorded duration: the long-running files one in two from the start, the others
 * between them in vitest's order, so the last seconds hold short files, and three long-running files at
 * once do not leave a core idle on their waits. With durations for all (a run before, in this checkout),
 * vitest's longest-first order is better. Either way the LAST files go last.
 */
export default class LongRunningSpread extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (spec: TestSpecification) => relative(this.ctx.config.root, spec.moduleId);
    const recorded = sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`));
    const ordered = recorded ? sorted : spread(sorted, (spec) => LONG_RUNNING.test(path(spec)));
    return [...ordered.filter((spec) => !LAST.test(path(spec))), ...ordered.filter((spec) => LAST.test(path(spec)))];
  }
}

/** One of `long` and one of the others in turn, each in the order given, until both run out. */
function spread(specs: TestSpecification[], long: (spec: TestSpecification) => boolean): TestSpecification[] {
  const first = specs.filter(long);
  const second = specs.filter((spec) => !long(spec));
  return Array.from({ length: Math.max(first.length, second.length) }, (_, at) => [first[at], second[at]])
    .flat()
    .filter((spec) => spec !== undefined);
}
