import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson, runCli, runCommand, temporaryDataDir } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// Commands that say what they did and did not do: refresh without a probe, import of an empty or
// missing folder, the one rule every database command picks its database by, config, a bad HOST,
// and hints an operator can paste. In this process (runCommand), each command's own file runs it once as
// a real process; but `start` with a bad HOST, a service that must end before anything starts.

let db: TestDatabase;
let scratch: Awaited<ReturnType<typeof temporaryDataDir>>;
/** A service registry of this test's own (XDG_RUNTIME_DIR): no service runs in it. */
let runtimeDir: string;

beforeAll(async () => {
  [db, scratch] = await Promise.all([createTestDatabase(), temporaryDataDir()]);
  runtimeDir = join(scratch.dir, 'xdg-runtime');
  await mkdir(runtimeDir, { recursive: true, mode: 0o700 });
});
afterAll(async () => {
  await db?.drop();
  await scratch?.remove();
});

describe('honest commands', () => {
  it('refresh with no status probe configured says so, exits non-zero and queues nothing', async () => {
    const jobs = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from graphile_worker.jobs`)[0]!.n;
    const before = await jobs();
    const result = await runCommand(['refresh', '--json'], { DATABASE_URL: db.url, XDG_RUNTIME_DIR: runtimeDir });
    expect(result.code).not.toBe(0);
    const message: string = parseJson(result).error.message;
    expect(message).toContain('no status probe is configured');
    expect(message).toMatch(/YOUTUBE_API_KEY.*STATUS_WATCH_PROBE=true.*YTDLP_PATH/);
    expect(await jobs()).toBe(before);
  });

  it('import of a folder with no yt-dlp video imports nothing and does not keep it as an archive root', async () => {
    const empty = join(scratch.dir, 'empty-folder');
    await mkdir(empty);
    const env = { DATABASE_URL: db.url, XDG_RUNTIME_DIR: runtimeDir };
    const result = await runCommand(['import', empty, '--json'], env);
    expect(result.code).not.toBe(0);
    expect(parseJson(result).error.message).toMatch(/holds no yt-dlp video .*nothing was imported and it was not kept as an archive root/);
    const roots = parseJson(await runCommand(['archives', 'list', '--json'], env)).roots as Array<{ path: string }>;
    expect(roots.map((root) => root.path)).not.toContain(empty);
  });

  it('import and archives add tell a missing path from a file', async () => {
    const missing = join(scratch.dir, 'no-such-folder');
    const file = join(scratch.dir, 'a-file.txt');
    await writeFile(file, 'not a folder');
    const env = { DATABASE_URL: db.url, XDG_RUNTIME_DIR: runtimeDir };
    const gone = await runCommand(['import', missing], env);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`${missing} does not exist`);
    const notFolder = await runCommand(['import', file], env);
    expect(notFolder.stderr).toContain(`${file} is not a directory`);
    const add = await runCommand(['archives', 'add', missing], env);
    expect(add.stderr).toContain(`${missing} does not exist`);
  });

  it('every command that uses the database takes --data-dir, by the same rule (it and DATABASE_URL: pick one)', async () => {
    const folder = join(scratch.dir, 'for-import');
    await mkdir(folder, { recursive: true });
    const calls = [
      ['users', 'create', '--email', 'x@example.org', '--tier', 'pro'],
      ['keys', 'create', '--user', 'x@example.org'],
      ['keys', 'revoke', '--user', 'x@example.org'],
      ['keys', 'list'],
      ['tiers', 'list'],
      ['tiers', 'set', 'pro', '--api-access', 'true'],
      ['refresh'],
      ['backfill', '@somebody'],
      ['migrate'],
      ['reindex'],
      ['bench', 'generate', '--videos', '1'],
      ['import', folder],
      ['archives', 'list'],
      ['start'],
    ];
    const env = { DATABASE_URL: db.url, TYPESENSE_URL: 'http://127.0.0.1:9', XDG_RUNTIME_DIR: runtimeDir };
    for (const call of calls) {
      const result = await runCommand([...call, '--data-dir', join(scratch.dir, 'named')], env);
      expect(result.code, call.join(' ')).toBe(2);
      expect(result.stderr, call.join(' ')).toContain('both --data-dir and DATABASE_URL name a database');
    }
    // Each command's modules are loaded on its first call: 15 s alone, more beside the other files.
  }, 90_000);

  it('with no database named and no service running, a command says how to name one instead of using ./.afterimage', async () => {
    const result = await runCommand(['keys', 'list'], { XDG_RUNTIME_DIR: runtimeDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no Afterimage service is running on this machine');
    expect(result.stderr).toContain('--data-dir DIR');
  });

  it("config says it shows this shell's settings", async () => {
    const result = await runCommand(['config']);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^# this shell's settings .*a running service uses the environment it was started with/);
    expect(result.stdout).toContain('\nPORT=8080\n');
  });

  it('HOST that is no address fails before anything starts, naming HOST', async () => {
    const dataDir = join(scratch.dir, 'bad-host');
    const result = await runCli(['start'], { HOST: 'not_a_host', DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HOST: "not_a_host" is not an address of this machine nor a name that resolves');
    expect(result.stderr).not.toContain('getaddrinfo');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('users create hints at an API key only for a tier that has API access', async () => {
    const env = { DATABASE_URL: db.url, XDG_RUNTIME_DIR: runtimeDir };
    const plus = await runCommand(['users', 'create', '--email', 'plus-hint@example.org', '--tier', 'plus'], env);
    expect(plus.code, plus.stderr).toBe(0);
    expect(plus.stdout).toContain('the plus tier has no API access (npx afterimage tiers list)');
    expect(plus.stdout).not.toContain('keys create');
    expect(plus.stdout).toContain('npx afterimage users password --email plus-hint@example.org --password-stdin');
    const pro = await runCommand(['users', 'create', '--email', 'pro-hint@example.org', '--tier', 'pro'], env);
    expect(pro.stdout).toContain('an API key: npx afterimage keys create --user pro-hint@example.org');
  });
});
