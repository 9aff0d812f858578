import { describe, it } from 'vitest';
import { haveRealFixtures, missingRealFixtures } from './realFixtures.ts';

// Apart from realFixtures.ts so that benchmarks can locate the fixtures without loading vitest.

/** A suite that reads real fixtures: without the folder it is skipped, with one line saying so. */
export function describeReal(name: string, fn: () => void): void {
  if (haveRealFixtures()) {
    describe(name, fn);
    return;
  }
  console.warn(missingRealFixtures(`suite "${name}"`));
  describe.skip(name, fn);
}

/** One test that reads real fixtures, in a suite that otherwise needs none; skipped the same way. */
export function itReal(name: string, fn: () => void | Promise<void>): void {
  if (haveRealFixtures()) {
    it(name, fn);
    return;
  }
  console.warn(missingRealFixtures(`test "${name}"`));
  it.skip(name, fn);
}
