import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connect } from '../../core/db/database.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';
import { parseJson, runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { withDatabaseName } from '../../core/db/database.ts';

// `afterimage tiers|migrate|config|help`: tiers and config once as a real process (runCli), the other cases in this
// process (runCommand); migrate runs as one beside a starting API in upgrade-from-release, help in bundle.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('tiers', () => {
  const cli = (...args: string[]) => runCommand(args, { DATABASE_URL: db.url });

  it('set changes limits (NAME=N, NAME=unlimited) and a feature of one tier, and list shows it', async () => {
    const set = await runCli(
      [
        'tiers',
        'set',
        'pro',
        '--limit',
        'requestsPerMinute=5',
        '--feature',
        'stenograms=off',
        '--limit',
        'channelSearchesPerHour=unlimited',
        '--json',
      ],
      { DATABASE_URL: db.url },
    );
    expect(set.code, set.stderr).toBe(0);
    const printed = parseJson(set);
    expect(printed.name).toBe('pro');
    expect(printed.limits.requestsPerMinute.max).toBe(5);
    expect(printed.features.stenograms).toBe(false);
    expect(printed.limits.channelSearchesPerHour.max).toBeNull(); // 'unlimited' stores no maximum

    const list = await cli('tiers', 'list', '--json');
    expect(list.code, list.stderr).toBe(0);
    const tiers = parseJson(list) as Array<{
      name: string;
      features: Record<string, boolean>;
      limits: Record<string, { max: number | null }>;
    }>;
    expect(tiers.map((tier) => tier.name)).toEqual(['anonymous', 'registered', 'plus', 'pro']);
    const pro = tiers.find((tier) => tier.name === 'pro')!;
    const plus = tiers.find((tier) => tier.name === 'plus')!;
    expect(pro.limits.requestsPerMinute!.max).toBe(5);
    expect(pro.features.stenograms).toBe(false);
    // Nothing else moved: other settings of pro, and the other tiers.
    expect(pro.limits.channelSearchesPerHour!.max).toBeNull();
    expect(pro.limits.subtitleDownloadsPerDay!.max).toBe(50);
    expect(pro.features.fullTextSearch).toBe(true);
    expect(plus.limits.requestsPerMinute!.max).toBe(120);
    expect(plus.features.stenograms).toBe(true);
  });

  it('set changes allowances (NAME=N, NAME=unlimited), and list shows them', async () => {
    const set = await cli('tiers', 'set', 'plus', '--allowance', 'watchlists=5', '--allowance', 'webhooks=unlimited', '--json');
    expect(set.code, set.stderr).toBe(0);
    const printed = parseJson(set);
    expect(printed.allowances.watchlists).toMatchObject({ max: 5, unit: 'watchlists' });
    expect(printed.allowances.webhooks.max).toBeNull();
    expect(printed.allowances.watchlistItems.max).toBe(1000);
    const listed = await cli('tiers', 'list');
    expect(listed.stdout).toMatch(/allowance watchlists .*5/);
    const refused = await cli('tiers', 'set', 'plus', '--allowance', 'watchlists=-1');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('allowances.watchlists');
  });

  it('rejects an unknown limit with exit 2 and changes nothing', async () => {
    const before = await db.sql`select tier, limit_name, max_count from tier_limits order by 1, 2`;
    const result = await cli('tiers', 'set', 'pro', '--limit', 'nope=5', '--limit', 'requestsPerMinute=7');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nope');
    expect(await db.sql`select tier, limit_name, max_count from tier_limits order by 1, 2`).toEqual(before);
  });

  it('rejects an unknown tier and a malformed --feature with exit 2', async () => {
    const [tier, feature] = await Promise.all([
      cli('tiers', 'set', 'gold', '--json'),
      cli('tiers', 'set', 'pro', '--feature', 'stenograms'),
    ]);
    expect(tier.code).toBe(2);
    expect(parseJson(tier).error).toEqual({ code: 'INVALID_INPUT', message: expect.stringContaining('anonymous, registered, plus, pro') });
    expect(feature.code).toBe(2);
    expect(feature.stderr).toContain('--feature');
  });
});

describe('migrate', () => {
  let empty: { name: string; url: string } | undefined;
  const admin = () => connect(withDatabaseName(inject('serverUrl'), 'postgres'), { max: 1, role: 'test' });

  afterAll(async () => {
    if (!empty) return;
    const sql = admin();
    await sql.unsafe(`drop database if exists ${empty.name} with (force)`);
    await sql.end();
  });

  it('applies every migration to an empty database, then nothing on a second run', async () => {
    // Named like the harness's databases, so its teardown removes it should this file die first.
    const name = `afterimage_test_${inject('templateDatabase').split('_').pop()}_${randomBytes(6).toString('hex')}`;
    const sql = admin();
    await sql.unsafe(`create database ${name}`);
    await sql.end();
    empty = { name, url: withDatabaseName(inject('serverUrl'), name) };

    const files = (await readMigrations()).map((migration) => migration.file);
    expect(files.length).toBeGreaterThan(0);
    const first = await runCommand(['migrate', '--json'], { DATABASE_URL: empty.url });
    expect(first.code, first.stderr).toBe(0);
    expect(parseJson(first)).toEqual({ applied: files });

    const second = await runCommand(['migrate', '--json'], { DATABASE_URL: empty.url });
    expect(second.code, second.stderr).toBe(0);
    expect(parseJson(second)).toEqual({ applied: [] });

    const check = connect(empty.url, { max: 1, role: 'test' });
    try {
      const recorded = await check<{ version: number }[]>`select version from schema_migrations order by version`;
      expect(recorded).toHaveLength(files.length);
      const [jobs] = await check`select to_regclass('graphile_worker._private_jobs') is not null as present`;
      expect(jobs).toEqual({ present: true });
    } finally {
      await check.end();
    }
  });
});

describe.concurrent('config', () => {
  it('prints the effective configuration with the password of DATABASE_URL masked, without connecting', async () => {
    const result = await runCli(['config', '--json'], {
      DATABASE_URL: 'postgres://u:secret@localhost:1/x',
      PORT: '9090',
      YOUTUBE_API_KEY: 'yt-secret-key',
    });
    expect(result.code, result.stderr).toBe(0);
    const config = parseJson(result);
    expect(config.DATABASE_URL).toBe('postgres://u:****@localhost:1/x');
    expect(config.PORT).toBe(9090);
    expect(config.LOG_LEVEL).toBe('warn');
    expect(config.WORKER_CONCURRENCY).toBe(4);
    expect(config.YOUTUBE_API_KEY).toBe('****');
    expect(result.stdout + result.stderr).not.toContain('secret');
  });

  it('refuses a bad value with exit 2, naming the setting and what was expected', async () => {
    const [human, json] = await Promise.all([runCommand(['config'], { PORT: 'abc' }), runCommand(['config', '--json'], { PORT: 'abc' })]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain('PORT');
    expect(human.stderr).toMatch(/expected a whole number from 0 to 65535/);
    expect(human.stderr).toContain('"abc"');
    expect(json.code).toBe(2);
    expect(parseJson(json).error).toEqual({ code: 'INVALID_INPUT', message: expect.stringContaining('PORT') });
  });

  it('never prints the password of an invalid DATABASE_URL', async () => {
    const result = await runCommand(['config'], { DATABASE_URL: 'mysql://u:secret@localhost/x' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stdout + result.stderr).not.toContain('secret');
  });
});

describe.concurrent('help and unknown commands', () => {
  it('help lists the commands', async () => {
    const result = await runCommand(['help']);
    expect(result.code).toBe(0);
    for (const command of [
      'start',
      'api',
      'worker',
      'migrate',
      'config',
      'users create',
      'keys create',
      'keys revoke',
      'keys list',
      'tiers list',
      'tiers set',
    ]) {
      expect(result.stdout).toContain(`  ${command}`);
    }
  });

  it('an unknown command exits 2 and points at help', async () => {
    const result = await runCommand(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown command "frobnicate"/);
    expect(result.stderr).toContain('help');
  });
});
