import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { createFileOnce } from '../createFileOnce.ts';
import type { Queryable } from '../db/database.ts';

/**
 * The server's own secret: it seals what must be kept but must not be stored as it is (webhook
 * signing secrets, AES-256-GCM) and derives what must be shown again but never stored (private feed
 * URLs, HMAC-SHA256). `SECRET_KEY` when set (every process of a deployment sets the same), else a key
 * generated once in `DATA_DIR/secret.key` (mode 0600). Its fingerprint is kept in the database, so a
 * process with another key refuses to start rather than sign and derive what nobody can check.
 */
export interface ServerKey {
  seal(plain: string): Buffer;
  open(sealed: Uint8Array): string;
  /** An unguessable token for `purpose` (a feed's id and version): the same for every process, changed by a new version. */
  derive(purpose: string): string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function serverKeyFrom(secret: Buffer): ServerKey {
  const key = createHash('sha256').update('afterimage server key\n').update(secret).digest();
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      const bytes = Buffer.from(sealed);
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
    derive: (purpose) => createHmac('sha256', key).update(purpose).digest('base64url'),
  };
}

/** The key of `DATA_DIR/secret.key`, written at first use; a process racing another reads the winner's. */
export async function keyFile(dataDir: string): Promise<Buffer> {
  const path = join(dataDir, 'secret.key');
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  await createFileOnce(path, randomBytes(32).toString('base64url'), 0o600);
  return readFile(path);
}

/**
 * The configured server key, checked against the fingerprint the database keeps (written by the first
 * process): another key refuses to start. A database that cannot be reached yet (an API that starts
 * while it is down, answering 503) is asked again every few seconds until it answers; a mismatch found
 * then makes every use of the key fail with the same explanation.
 */
export async function configuredServerKey(config: Config, sql: Queryable): Promise<ServerKey> {
  const secret = config.SECRET_KEY ? Buffer.from(config.SECRET_KEY) : await keyFile(config.dataDir);
  const serverKey = serverKeyFrom(secret);
  const fingerprint = serverKey.derive('fingerprint');
  let mismatch: Error | undefined;
  const check = async () => {
    await sql`insert into server_key (fingerprint) values (${fingerprint}) on conflict do nothing`;
    const [kept] = await sql<{ fingerprint: string }[]>`select fingerprint from server_key`;
    if (kept && kept.fingerprint !== fingerprint)
      mismatch = new Error(
        config.SECRET_KEY
          ? 'SECRET_KEY is not the key this database was set up with: give every process the same SECRET_KEY (webhook secrets and feed URLs depend on it)'
          : `${join(config.dataDir, 'secret.key')} is not the key this database was set up with: set SECRET_KEY to the key the other processes use, or copy their secret.key here`,
      );
  };
  await check().catch(function later() {
    setTimeout(() => void check().catch(later), 5_000).unref();
  });
  if (mismatch) throw mismatch;
  const checked =
    <A extends unknown[], R>(use: (...args: A) => R) =>
    (...args: A): R => {
      if (mismatch) throw mismatch;
      return use(...args);
    };
  return { seal: checked(serverKey.seal), open: checked(serverKey.open), derive: checked(serverKey.derive) };
}
