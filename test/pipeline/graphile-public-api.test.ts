import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// graphile-worker's tables are private: "they may change in a patch release" (its docs, "Database
// schema"). What ships reaches it through add_job(s), the admin functions and the `jobs` view only.

const root = fileURLToPath(new URL('../../', import.meta.url));
/** The service and its operator commands; the benchmarks and tests may look inside to measure and set up. */
const shipped = ['api', 'core', 'pipeline', 'scripts/commands'];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe('graphile-worker', () => {
  it('is used through its public interface only: no shipped file names a private table', () => {
    const uses = shipped.flatMap(sourceFiles).flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          /graphile_worker\._private_/.test(line) ? [`${relative(root, join(root, file))}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(uses).toEqual([]);
  });
});
