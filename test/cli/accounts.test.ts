import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../core/accounts/createSession.ts';
import { verifyPassword } from '../../core/accounts/password.ts';
import { sessionUser } from '../../core/accounts/sessionUser.ts';
import { parseJson, runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// `afterimage users …` and `afterimage keys …` against this file's database: each command once as a
// real process (`spawned`, or `cliWithStdin` for the passwords it reads: what a user sees, exit code
// included), the other cases in this process.

let db: TestDatabase;
let env: Record<string, string>;
const cli = (...args: string[]) => runCommand(args, env);
const spawned = (...args: string[]) => runCli(args, env);
const cliWithStdin = (input: string, ...args: string[]) => runCli(args, env, input);

beforeAll(async () => {
  db = await createTestDatabase();
  env = { DATABASE_URL: db.url };
});
afterAll(async () => {
  await db?.drop();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Every row of every table of the public schema, as text: where a leaked key would show up. */
async function wholeDatabaseText(): Promise<string> {
  const tables = await db.sql<{ name: string }[]>`
    select quote_ident(table_schema) || '.' || quote_ident(table_name) as name from information_schema.tables
    where table_schema in ('public', 'graphile_worker') and table_type = 'BASE TABLE'`;
  expect(tables.map((table) => table.name)).toContain('public.api_keys');
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await db.sql.unsafe<{ row: string }[]>(`select t::text as row from ${name} t`);
    parts.push(...rows.map((row) => row.row));
  }
  return parts.join('\n');
}

describe('users create', () => {
  it('creates a user and prints it as JSON', async () => {
    const result = await cli('users', 'create', '--email', 'Ops@Example.org', '--tier', 'pro', '--admin', '--json');
    expect(result.code, result.stderr).toBe(0);
    const user = parseJson(result);
    expect(user).toMatchObject({ email: 'ops@example.org', tier: 'pro', isAdmin: true });
    expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
    const [row] = await db.sql`select email, tier, is_admin from users where id = ${user.id}`;
    expect(row).toEqual({ email: 'ops@example.org', tier: 'pro', is_admin: true });
  });

  it('refuses a second user with the same email, whatever its case, with exit 1 and a clear message', async () => {
    const result = await cli('users', 'create', '--email', 'OPS@example.org', '--tier', 'plus');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/already exists/);
    expect(result.stderr).toContain('ops@example.org');
    const [row] = await db.sql<{ count: number }[]>`select count(*)::int as count from users where lower(email) = 'ops@example.org'`;
    expect(row!.count).toBe(1);
  });

  it('rejects an unknown tier with exit 2, naming --tier, and creates nothing', async () => {
    const result = await cli('users', 'create', '--email', 'gold@example.org', '--tier', 'gold');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--tier');
    expect(result.stderr).toContain('gold');
    expect(await db.sql`select 1 from users where email = 'gold@example.org'`).toHaveLength(0);
  });
});

describe('keys', () => {
  let userId: string;
  let firstKey: string;
  let secondKey: string;

  let plusUserId: string;

  beforeAll(async () => {
    const [created, plus] = await Promise.all([
      cli('users', 'create', '--email', 'keys@example.org', '--tier', 'pro', '--json'),
      cli('users', 'create', '--email', 'plus@example.org', '--tier', 'plus', '--json'),
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(plus.code, plus.stderr).toBe(0);
    userId = parseJson(created).id;
    plusUserId = parseJson(plus).id;
  });

  it('create prints {key, userId, scope}; the scope defaults to the tier maximum (pro: L4)', async () => {
    const result = await spawned('keys', 'create', '--user', 'keys@example.org', '--json');
    expect(result.code, result.stderr).toBe(0);
    const created = parseJson(result);
    expect(Object.keys(created).sort()).toEqual(['key', 'scope', 'userId']);
    expect(created.key).toMatch(/^tsk_[A-Za-z0-9]{48}$/);
    expect(created.userId).toBe(userId);
    expect(created.scope).toBe('L4');
    firstKey = created.key;
    const rows = await db.sql`select scope, revoked_at from api_keys where user_id = ${userId}`;
    expect(rows).toEqual([{ scope: 4, revoked_at: null }]);
  });

  it('create --scope L3 issues an L3 key and revokes the first one: exactly one active key per user', async () => {
    const result = await cli('keys', 'create', '--user', 'KEYS@example.org', '--scope', 'L3', '--json');
    expect(result.code, result.stderr).toBe(0);
    const created = parseJson(result);
    expect(created.scope).toBe('L3');
    expect(created.key).toMatch(/^tsk_[A-Za-z0-9]{48}$/);
    expect(created.key).not.toBe(firstKey);
    secondKey = created.key;

    const rows = await db.sql<{ keyHash: Buffer; scope: number; revokedAt: Date | null }[]>`
      select key_hash as "keyHash", scope, revoked_at as "revokedAt" from api_keys where user_id = ${userId}`;
    expect(rows).toHaveLength(2);
    const active = rows.filter((row) => row.revokedAt === null);
    expect(active).toHaveLength(1);
    expect(active[0]!.keyHash.equals(sha256(secondKey))).toBe(true);
    expect(active[0]!.scope).toBe(3);
    const first = rows.find((row) => row.keyHash.equals(sha256(firstKey)));
    expect(first?.revokedAt).toBeInstanceOf(Date);
  });

  it('stores only the SHA-256 of a key: the key itself is nowhere in the database', async () => {
    const [row] = await db.sql<{ keyHash: Buffer; prefix: string }[]>`
      select key_hash as "keyHash", key_prefix as prefix from api_keys where user_id = ${userId} and revoked_at is null`;
    expect(row!.keyHash.equals(sha256(secondKey))).toBe(true);
    expect(row!.prefix).toBe(secondKey.slice(0, 10));
    const everything = await wholeDatabaseText();
    for (const key of [firstKey, secondKey]) {
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(key.slice(4)); // not even without its tsk_ prefix
    }
  });

  it('refuses a scope above what the tier allows (plus: L2) with a non-zero exit and stores no key', async () => {
    const result = await cli('keys', 'create', '--user', 'plus@example.org', '--scope', 'L3');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/scope L3 exceeds L2/);
    expect(result.stdout).not.toMatch(/tsk_/);
    expect(await db.sql`select 1 from api_keys where user_id = ${plusUserId}`).toHaveLength(0);
  });

  it('rejects a scope that does not exist with exit 2 naming --scope', async () => {
    const result = await cli('keys', 'create', '--user', 'keys@example.org', '--scope', 'L9');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--scope');
  });

  it('list --json shows prefixes, owners and scopes, never a key', async () => {
    const result = await cli('keys', 'list', '--json');
    expect(result.code, result.stderr).toBe(0);
    const listed = parseJson(result);
    expect(listed).toEqual([
      expect.objectContaining({ prefix: secondKey.slice(0, 10), email: 'keys@example.org', tier: 'pro', scope: 'L3', revokedAt: null }),
    ]);
    for (const field of Object.keys(listed[0])) expect(field).not.toMatch(/hash|secret|^key$/i);
    for (const key of [firstKey, secondKey]) {
      expect(result.stdout).not.toContain(key);
      expect(result.stdout).not.toContain(key.slice(0, 11)); // nothing beyond the 10-character prefix
      const hash = sha256(key);
      for (const form of [hash.toString('hex'), hash.toString('base64'), [...hash].join(',')]) {
        expect(result.stdout).not.toContain(form);
      }
    }
  });

  it('list --all includes revoked keys', async () => {
    const result = await cli('keys', 'list', '--all', '--json');
    expect(result.code, result.stderr).toBe(0);
    const listed = parseJson(result) as Array<{ prefix: string; revokedAt: string | null }>;
    expect(listed.map((key) => key.prefix).sort()).toEqual([firstKey.slice(0, 10), secondKey.slice(0, 10)].sort());
    expect(listed.find((key) => key.prefix === firstKey.slice(0, 10))!.revokedAt).not.toBeNull();
    expect(result.stdout).not.toContain(firstKey);
  });

  it('revoke revokes the active key; revoking again fails with NOT_FOUND', async () => {
    const result = await cli('keys', 'revoke', '--user', 'keys@example.org', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toEqual({ revoked: true, prefix: secondKey.slice(0, 10) });
    expect(await db.sql`select 1 from api_keys where user_id = ${userId} and revoked_at is null`).toHaveLength(0);

    const again = await cli('keys', 'revoke', '--user', 'keys@example.org', '--json');
    expect(again.code).not.toBe(0);
    expect(parseJson(again).error).toEqual({ code: 'NOT_FOUND', message: expect.stringContaining('keys@example.org') });
  });

  it('names the missing user when the email is unknown', async () => {
    const result = await cli('keys', 'create', '--user', 'nobody@example.org', '--json');
    expect(result.code).toBe(1);
    expect(parseJson(result).error).toEqual({ code: 'NOT_FOUND', message: expect.stringContaining('nobody@example.org') });
  });
});

describe('passwords', () => {
  const PASSWORD = 'a long enough passphrase';
  const storedHash = async (address: string) =>
    (await db.sql<{ hash: string | null }[]>`select password_hash as hash from users where email = ${address}`)[0]?.hash;

  it('users create --password-stdin reads the password from stdin (one final line break dropped) and stores only its scrypt hash', async () => {
    const result = await cliWithStdin(
      `${PASSWORD}\n`,
      'users',
      'create',
      '--email',
      'web@example.org',
      '--tier',
      'plus',
      '--password-stdin',
      '--json',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toMatchObject({ email: 'web@example.org', tier: 'plus' });
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    const hash = await storedHash('web@example.org');
    expect(hash).toMatch(new RegExp(`^\\$scrypt\\$ln=${process.env.PASSWORD_HASH_COST},r=8,p=3\\$`));
    expect((await verifyPassword(PASSWORD, hash)).valid).toBe(true);
    expect((await wholeDatabaseText()).includes(PASSWORD)).toBe(false);
  });

  it('without --password-stdin a user has no password, and the command says how to give one', async () => {
    const result = await cli('users', 'create', '--email', 'keyonly@example.org', '--tier', 'pro');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('afterimage users password --email keyonly@example.org --password-stdin');
    expect(await storedHash('keyonly@example.org')).toBeNull();
  });

  it('refuses a too-short password with exit 2, saying how long it must be, without echoing it; creates nobody', async () => {
    const result = await cliWithStdin('hunter2\n', 'users', 'create', '--email', 'short@example.org', '--tier', 'plus', '--password-stdin');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/at least 12 characters/);
    expect(result.stderr).not.toContain('hunter2');
    expect(await db.sql`select 1 from users where email = 'short@example.org'`).toHaveLength(0);
  });

  it('takes no password on the command line', async () => {
    const result = await cli('users', 'password', '--email', 'web@example.org', '--password', PASSWORD);
    expect(result.code).toBe(2);
    const without = await cli('users', 'password', '--email', 'web@example.org');
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('--password-stdin');
  });

  it('users password sets a new password and signs the user out of every session', async () => {
    const [user] = await db.sql<{ id: string }[]>`select id from users where email = 'web@example.org'`;
    const sessions = await Promise.all([createSession(db.sql, user!.id), createSession(db.sql, user!.id)]);
    const result = await cliWithStdin(
      'another long passphrase\r\n',
      'users',
      'password',
      '--email',
      'WEB@example.org',
      '--password-stdin',
      '--json',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toEqual({ email: 'web@example.org', endedSessions: 2 });
    for (const session of sessions) expect(await sessionUser(db.sql, session.token)).toBeUndefined();
    const hash = await storedHash('web@example.org');
    expect((await verifyPassword('another long passphrase', hash)).valid).toBe(true);
    expect((await verifyPassword(PASSWORD, hash)).valid).toBe(false);
  });

  it('users password names an unknown email (exit 1)', async () => {
    const result = await cliWithStdin(`${PASSWORD}\n`, 'users', 'password', '--email', 'ghost@example.org', '--password-stdin', '--json');
    expect(result.code).toBe(1);
    expect(parseJson(result).error).toEqual({ code: 'NOT_FOUND', message: expect.stringContaining('ghost@example.org') });
  });
});
