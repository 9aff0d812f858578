import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const checkout = fileURLToPath(new URL('../../', import.meta.url));

// scripts/bin.mjs runs the bundle scripts/build.mjs keeps in .build/. A copy of the checkout's sources
// (node_modules linked) lets this test change a source without touching the checkout the suite runs.
let copy = '';
beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'afterimage-bundle-'));
  for (const folder of ['core', 'api', 'pipeline', 'scripts', 'sql', 'test/kit'])
    cpSync(join(checkout, folder), join(copy, folder), { recursive: true, filter: (path) => !path.includes('/bench/results') });
  cpSync(join(checkout, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(checkout, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

const afterimage = (...args: string[]) => run(process.execPath, [join(copy, 'scripts/bin.mjs'), ...args], { cwd: copy, timeout: 60_000 });
const current = () =>
  JSON.parse(readFileSync(join(copy, '.build/current.json'), 'utf8')) as { folder: string; sources: Record<string, number> };
/** Changes the help text in scripts/afterimage.ts and runs help. */
function change(mark: string) {
  const source = join(copy, 'scripts/afterimage.ts');
  writeFileSync(
    source,
    readFileSync(source, 'utf8').replace(
      /usage: npx afterimage <command> \[options\].*$/m,
      `usage: npx afterimage <command> [options] ${mark}`,
    ),
  );
  return afterimage('help');
}
const builds = () => readdirSync(join(copy, '.build')).filter((name) => name !== 'current.json');

describe('the afterimage command runs a bundle of its sources', () => {
  it('builds it at the first run, then runs it as it is while no source changes', async () => {
    const { stdout } = await afterimage('help');
    expect(stdout).toMatch(/^afterimage \d+\.\d+\.\d+/);
    const first = current();
    expect(Object.keys(first.sources)).toEqual(expect.arrayContaining(['scripts/afterimage.ts', 'core/config.ts']));
    expect(builds()).toEqual([first.folder]);
    await afterimage('help');
    expect(current().folder).toBe(first.folder);
  });

  it('builds it again when a source changes, and runs the changed source', async () => {
    const before = current().folder;
    writeFileSync(
      join(copy, 'package.json'),
      readFileSync(join(checkout, 'package.json'), 'utf8').replace(/"version": "[^"]+"/, '"version": "9.9.9"'),
    );
    const { stdout: version } = await afterimage('help');
    // package.json is read at run time beside the sources (import.meta.url rewritten), not bundled.
    expect(version).toMatch(/^afterimage 9\.9\.9/);
    expect(current().folder).toBe(before);
    const { stdout: changed } = await change('(changed once)');
    expect(changed).toContain('(changed once)');
    expect(current().folder).not.toBe(before);
    // Older builds stay for the processes started on them: the newest three.
    for (const mark of ['(twice)', '(three times)', '(four times)']) await change(mark);
    expect(builds()).toHaveLength(3);
    expect(builds()).toContain(current().folder);
    // Six processes, five of them building the bundle first: 15 s beside two other test files, over 30 at load 8.
  }, 90_000);

  it('runs the sources through tsx where .build cannot be written', async () => {
    rmSync(join(copy, '.build'), { recursive: true, force: true });
    writeFileSync(join(copy, '.build'), 'not a folder');
    const { stdout } = await change('(through tsx)');
    expect(stdout).toMatch(/^afterimage 9\.9\.9/);
    expect(stdout).toContain('(through tsx)');
  });
});
