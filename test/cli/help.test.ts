import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCommand, temporaryDataDir } from '../support/cli.ts';

// --help, -h and `help <command>` of every command and subcommand: the usage on stdout, exit 0, and
// nothing started (no database, no service, no DATA_DIR made). A mistake in a call shows the usage too.
// In this process (runCommand), but for one real `start --help`: the service's own entry answers before starting anything.

let dataDir: Awaited<ReturnType<typeof temporaryDataDir>>;
/** A DATA_DIR nothing may create: a command that ran instead of answering --help would make it. */
let untouched: string;

beforeAll(async () => {
  dataDir = await temporaryDataDir();
  untouched = join(dataDir.dir, 'never-made');
});
afterAll(async () => {
  await dataDir?.remove();
});

/** Each command as called, and what its usage must name. */
const commands: Array<[string[], string]> = [
  [['demo'], 'npx afterimage demo'],
  [['import'], 'npx afterimage import'],
  [['archives'], 'npx afterimage archives list'],
  [['archives', 'list'], 'npx afterimage archives list'],
  [['archives', 'add'], 'npx afterimage archives add'],
  [['archives', 'remove'], 'npx afterimage archives remove'],
  [['backfill'], 'npx afterimage backfill'],
  [['refresh'], 'npx afterimage refresh'],
  [['reindex'], 'npx afterimage reindex'],
  [['migrate'], 'npx afterimage migrate'],
  [['config'], 'npx afterimage config'],
  [['users'], 'npx afterimage users create'],
  [['users', 'create'], 'npx afterimage users create'],
  [['users', 'password'], 'npx afterimage users password'],
  [['keys'], 'npx afterimage keys create'],
  [['keys', 'create'], 'npx afterimage keys create'],
  [['keys', 'revoke'], 'npx afterimage keys revoke'],
  [['keys', 'list'], 'npx afterimage keys list'],
  [['tiers'], 'npx afterimage tiers list'],
  [['tiers', 'list'], 'npx afterimage tiers list'],
  [['tiers', 'set'], 'npx afterimage tiers set'],
  [['subtitles'], 'npx afterimage subtitles convert'],
  [['subtitles', 'convert'], 'npx afterimage subtitles convert'],
  [['bench'], 'npx afterimage bench generate'],
  [['bench', 'generate'], 'npx afterimage bench generate'],
  [['mcp'], 'npx afterimage mcp'],
];

const expectUsage = (result: { code: number; stdout: string; stderr: string }, names: string, call: string) => {
  expect(result.code, `${call}: ${result.stderr}`).toBe(0);
  expect(result.stdout, call).toMatch(/^usage:/);
  expect(result.stdout, call).toContain(names);
  expect(result.stderr, call).toBe('');
};

describe('afterimage --help', () => {
  it.each(['start', 'api', 'worker'])('%s: --help, -h and help <command> print the usage and start nothing', async (command) => {
    const env = { DATA_DIR: untouched };
    for (const call of [
      [command, '--help'],
      [command, '-h'],
      ['help', command],
    ]) {
      const result = await runCommand(call, env);
      expectUsage(result, `npx afterimage ${command}`, call.join(' '));
      expect(result.stdout).toContain('--data-dir DIR');
    }
    expect(existsSync(untouched)).toBe(false);
  });

  it('a real `afterimage start --help` prints the usage and exits 0, starting nothing', async () => {
    const result = await runCli(['start', '--help'], { DATA_DIR: untouched });
    expectUsage(result, 'npx afterimage start', 'start --help');
    expect(existsSync(untouched)).toBe(false);
  });

  it('every other command and subcommand answers --help, -h and help <command> with its usage, running nothing', async () => {
    for (const [call, names] of commands) {
      const env = { DATA_DIR: untouched };
      expectUsage(await runCommand([...call, '--help'], env), names, `${call.join(' ')} --help`);
      expectUsage(await runCommand([...call, '-h', '--json'], env), names, `${call.join(' ')} -h --json`);
      expectUsage(await runCommand(['help', ...call], env), names, `help ${call.join(' ')}`);
    }
    expect(existsSync(untouched)).toBe(false);
  });

  it('--help anywhere among the options wins over the rest of the call', async () => {
    const result = await runCommand(['users', 'create', '--email', 'someone@example.org', '--tier', 'pro', '--help'], {
      DATA_DIR: untouched,
    });
    expectUsage(result, 'npx afterimage users create', 'users create … --help');
    expect(existsSync(untouched)).toBe(false);
  });

  it('a mistake in a call names it and shows the usage on stderr, exit 2', async () => {
    const unknownOption = await runCommand(['refresh', '--frobnicate']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("Unknown option '--frobnicate'");
    expect(unknownOption.stderr).toContain('usage: npx afterimage refresh');
    const unknownSubcommand = await runCommand(['keys', 'rotate']);
    expect(unknownSubcommand.code).toBe(2);
    expect(unknownSubcommand.stderr).toContain('unknown subcommand "rotate"');
    expect(unknownSubcommand.stderr).toContain('npx afterimage keys create');
  });

  it('the list of commands tells how to run them from the project folder and how to ask one for its usage', async () => {
    const result = await runCommand(['help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage: npx afterimage <command> [options]');
    expect(result.stdout).toContain('npx afterimage <command> --help');
    expect(result.stdout).toContain('elsewhere npx fetches an unrelated npm package');
  });
});
