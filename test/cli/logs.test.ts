import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, killService, runCommand, startService, temporaryDataDir, type Service } from '../support/cli.ts';

// Logs a person can read (LOG_FORMAT=pretty, what a terminal gets), and the first start's key and
// sign-in link set apart from them on stdout.

let dataDir: Awaited<ReturnType<typeof temporaryDataDir>>;
let service: Service | undefined;

beforeAll(async () => {
  dataDir = await temporaryDataDir({ migrated: true });
});
afterAll(async () => {
  await killService(service, 'SIGTERM');
  await dataDir?.remove();
});

describe('logs', () => {
  it('LOG_FORMAT=pretty writes one readable line per entry, and the first run prints its key and link between rules of their own', async () => {
    service = startService(['start'], { DATA_DIR: dataDir.dir, PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' });
    const [, key] = (await service.waitForStdout(/\n\s+(tsk_[A-Za-z0-9]{48})\n/, 60_000)) as RegExpMatchArray;
    await service.waitForStderr(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}afterimage ready role=start version=\S+ ms=\d+ database=embedded$/m,
      60_000,
    );
    const lines = service
      .stderr()
      .split('\n')
      .filter((line) => line !== '');
    for (const line of lines) expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO |WARN |ERROR) \S/);
    expect(service.stderr()).toMatch(/^\S+ INFO {2}API listening url=http:\/\/127\.0\.0\.1:\d+$/m);

    // The box: a rule, the administrator, its key, the sign-in link, a rule; nothing else between.
    const box = service.stdout().match(/\n(═{20,})\n([\s\S]*?)\n(═{20,})\n/);
    expect(box, service.stdout()).not.toBeNull();
    expect(box![1]).toBe(box![3]);
    expect(box![2]).toContain('First run: created the administrator admin@afterimage.localhost');
    expect(box![2]).toContain(`\n      ${key}\n`);
    expect(box![2]).toMatch(/\n {6}http:\/\/127\.0\.0\.1:\d+\/login\/once\/\S+\n/);
    expect(box![2]).toContain('npx afterimage users password --email admin@afterimage.localhost --password-stdin');
  }, 120_000);

  it('LOG_FORMAT=auto (the default) writes readable lines when stderr is a terminal', async () => {
    const dir = join(dataDir.dir, 'in-a-terminal');
    // util-linux `script` runs the command on a pseudo-terminal, as a person's shell does; it echoes what the command wrote.
    const { stdout } = await promisify(execFile)(
      'script',
      ['--quiet', '--return', '--command', `${process.execPath} scripts/bin.mjs migrate --data-dir ${dir}`, '/dev/null'],
      { cwd: fileURLToPath(new URL('../../', import.meta.url)), env: cliEnv({ LOG_LEVEL: 'info' }), timeout: 60_000 },
    );
    expect(stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}migration applied migration=001_tiers\.sql\r?$/m);
    expect(stdout).not.toContain('{"time"');
  }, 90_000);

  it('LOG_FORMAT takes auto, pretty or json, and a bad value is refused naming it', async () => {
    const refused = await runCommand(['config'], { LOG_FORMAT: 'colour' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('LOG_FORMAT: expected auto, pretty or json');
  });
});
