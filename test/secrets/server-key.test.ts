import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { createFileOnce } from '../../core/createFileOnce.ts';
import { configuredServerKey, keyFile, serverKeyFrom } from '../../core/secrets/serverKey.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
let dataDir: string;
beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-key-'));
});
afterAll(async () => {
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the server key', () => {
  it('seals so that only the same key opens, and a changed byte is refused', () => {
    const key = serverKeyFrom(Buffer.from('a'.repeat(32)));
    const sealed = key.seal('whsec_secret');
    expect(sealed.toString('utf8')).not.toContain('whsec_secret');
    expect(key.open(sealed)).toBe('whsec_secret');
    expect(() => serverKeyFrom(Buffer.from('b'.repeat(32))).open(sealed)).toThrow();
    sealed[sealed.length - 1]! ^= 1;
    expect(() => key.open(sealed)).toThrow();
  });

  it('derives the same token for the same purpose, another for another', () => {
    const key = serverKeyFrom(Buffer.from('a'.repeat(32)));
    expect(key.derive('feed:x:1')).toBe(serverKeyFrom(Buffer.from('a'.repeat(32))).derive('feed:x:1'));
    expect(key.derive('feed:x:2')).not.toBe(key.derive('feed:x:1'));
  });

  it('without SECRET_KEY keeps one in DATA_DIR (0600), and a process with another key than the database knows refuses to start', async () => {
    const fromFile = await configuredServerKey(loadConfig({ DATA_DIR: dataDir }), db.sql);
    expect((await stat(join(dataDir, 'secret.key'))).mode & 0o777).toBe(0o600);
    const again = await configuredServerKey(loadConfig({ DATA_DIR: dataDir }), db.sql);
    expect(again.derive('p')).toBe(fromFile.derive('p'));
    expect((await readFile(join(dataDir, 'secret.key'), 'utf8')).length).toBeGreaterThanOrEqual(32);
    await expect(configuredServerKey(loadConfig({ DATA_DIR: dataDir, SECRET_KEY: 'c'.repeat(40) }), db.sql)).rejects.toThrow(
      /SECRET_KEY is not the key this database was set up with/,
    );
  });

  // The race itself (an API and its worker started together on a fresh DATA_DIR) is test/fault/worker-restart's start.
  it('creates secret.key whole in one step: a second taker gets the same key, and nothing is left beside it', async () => {
    const fresh = join(dataDir, 'fresh');
    await mkdir(fresh);
    expect(await createFileOnce(join(fresh, 'secret.key'), 'x'.repeat(43), 0o600)).toBe(true);
    expect(await createFileOnce(join(fresh, 'secret.key'), 'y'.repeat(43), 0o600)).toBe(false);
    expect((await keyFile(fresh)).toString('utf8')).toBe('x'.repeat(43));
    expect(await readdir(fresh)).toEqual(['secret.key']);
    expect((await stat(join(fresh, 'secret.key'))).mode & 0o777).toBe(0o600);
  });
});
