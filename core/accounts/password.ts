import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { z } from 'zod';
import { configSchema } from '../config.ts';

/**
 * Passwords are hashed with scrypt (Node's, from OpenSSL) at OWASP's cost for it by default: N=2^15, r=8,
 * p=3 is as slow to guess as N=2^17, p=1 but needs 32 MiB rather than 128 per hash, which a burst of
 * sign-ins on a small server can afford. The stored string names the parameters, so changing them
 * (PASSWORD_HASH_COST) only changes new hashes: each password is hashed again at its next sign-in.
 */
type Parameters = { ln: number; r: number; p: number };

/**
 * Today's parameters, from the environment each process hashing a password shares (the API, the worker,
 * `afterimage users`); loadConfig has refused a bad PASSWORD_HASH_COST at start-up, before any hash.
 */
const current = (): Parameters => ({ ln: configSchema.shape.PASSWORD_HASH_COST.parse(process.env.PASSWORD_HASH_COST), r: 8, p: 3 });
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const STORED = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

export const PASSWORD_MIN_LENGTH = 12;
/** scrypt takes any length, but a megabyte of "password" is an attack on the server, not a password. */
const PASSWORD_MAX_LENGTH = 1024;

export const password = z
  .string()
  .min(PASSWORD_MIN_LENGTH, {
    message: `too short: a password needs at least ${PASSWORD_MIN_LENGTH} characters (a few unrelated words make a good one)`,
  })
  .max(PASSWORD_MAX_LENGTH, { message: `too long: at most ${PASSWORD_MAX_LENGTH} characters` });

const derive = (secret: string, salt: Buffer, { ln, r, p }: Parameters) =>
  new Promise<Buffer>((resolve, reject) => {
    // maxmem: twice what the parameters need (128·N·r), so OpenSSL's own overhead fits.
    const options: ScryptOptions = { N: 2 ** ln, r, p, maxmem: 256 * 2 ** ln * r };
    scrypt(secret.normalize('NFC'), salt, HASH_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/** `$scrypt$ln=15,r=8,p=3$<salt>$<hash>` (base64 without padding), with a fresh random salt. */
export async function hashPassword(secret: string): Promise<string> {
  const parameters = current();
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(secret, salt, parameters);
  return `$scrypt$ln=${parameters.ln},r=${parameters.r},p=${parameters.p}$${b64(salt)}$${b64(hash)}`;
}

/**
 * Whether `secret` is the password of `stored`, compared in constant time; `outdated` when it was hashed
 * with other parameters than today's (hash it again). Without a stored hash (an unknown email, a user
 * without a password) a hash is still computed, so the answer takes as long either way.
 */
export async function verifyPassword(secret: string, stored: string | null | undefined): Promise<{ valid: boolean; outdated: boolean }> {
  const today = current();
  const match = stored ? STORED.exec(stored) : null;
  if (!match) {
    await derive(secret, randomBytes(SALT_BYTES), today);
    return { valid: false, outdated: false };
  }
  const parameters = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  const expected = Buffer.from(match[5]!, 'base64');
  const actual = await derive(secret, Buffer.from(match[4]!, 'base64'), parameters);
  const valid = actual.length === expected.length && timingSafeEqual(actual, expected);
  return { valid, outdated: valid && (parameters.ln !== today.ln || parameters.r !== today.r || parameters.p !== today.p) };
}
