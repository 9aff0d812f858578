/**
 * The production files a flow runs code in: V8's precise coverage (the inspector's Profiler, as
 * c8 and vitest's v8 coverage read it) around the flow, in this process, where the test stack runs
 * the API and the worker. A file counts when a function of it other than its module body was
 * called, so files merely loaded do not; the test kit's own files are left out.
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCTION = /^(?:api|core|pipeline)\//;

export async function filesCrossed(flow: () => Promise<void>): Promise<string[]> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // counts start again from here
    await flow();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    const files = new Set<string>();
    for (const script of result) {
      const path = script.url.startsWith('file://') ? fileURLToPath(script.url) : script.url;
      if (!path.startsWith(ROOT)) continue;
      const relative = path.slice(ROOT.length).replace(/\?.*$/, '');
      // The first entry is the module body (the whole script); a file counts for a function called in it.
      if (PRODUCTION.test(relative) && script.functions.slice(1).some((fn) => fn.ranges.some((range) => range.count > 0)))
        files.add(relative);
    }
    return [...files].sort();
  } finally {
    session.disconnect();
  }
}
