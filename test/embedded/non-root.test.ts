import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const asRoot = userInfo().uid === 0;
const nobody = asRoot
  ? await run('id', ['-u', 'nobody']).then(
      (out) => Number(out.stdout.trim()),
      () => undefined,
    )
  : undefined;
// The checkout must be readable by that user (a clone inside a private folder is not).
const readable =
  nobody !== undefined &&
  (await run('runuser', ['-u', 'nobody', '--', 'test', '-r', 'node_modules/tsx/package.json']).then(
    () => true,
    () => false,
  ));
if (!asRoot) console.warn('non-root embedded test skipped: the suite already runs as a normal user, which is the case it covers');
else if (!readable) console.warn('non-root embedded test skipped: the user nobody cannot read this checkout');

// Run as root, the rest of the suite covers the root path (PostgreSQL as the postgres OS user);
// this covers a normal user owning its own cluster, by running the real command as `nobody`.
describe.skipIf(!readable)('embedded PostgreSQL as a normal user', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('initialises, migrates and stops a cluster owned by that user', async () => {
    dir = await mkdtemp(join(tmpdir(), 'afterimage-nonroot-'));
    await chown(dir, nobody!, nobody!);
    const dataDir = join(dir, 'data');
    const { stdout } = await run('runuser', ['-u', 'nobody', '--', process.execPath, 'scripts/bin.mjs', 'migrate', '--json'], {
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'warn', TMPDIR: dir },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout).applied).toContain('001_tiers.sql');
    const { stdout: again } = await run('runuser', ['-u', 'nobody', '--', process.execPath, 'scripts/bin.mjs', 'keys', 'list', '--json'], {
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'warn', TMPDIR: dir },
      timeout: 60_000,
    });
    expect(JSON.parse(again)).toEqual([]);
    // The last (only) user of the cluster stopped it on exit.
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    // Two commands, each started from the TypeScript sources (nobody cannot write the bundle), one running initdb: 20 s alone.
  }, 120_000);
});
