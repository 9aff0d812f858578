import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_SHAPE = /^tsk_[A-Za-z0-9]{48}$/;

/** `tsk_` and 48 characters drawn uniformly from 62 (about 286 bits of entropy). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 48; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `tsk_${body}`;
}

export const isWellFormedApiKey = (value: string) => KEY_SHAPE.test(value);
/** Keys and other bearer tokens are stored only as their SHA-256: long random secrets need no slow hash. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest();
export const hashApiKey = (key: string) => hashToken(key);
/** A session's or a sign-in link's secret: 256 random bits, URL- and cookie-safe (43 characters). */
export const generateToken = () => randomBytes(32).toString('base64url');
export const isWellFormedToken = (value: string) => /^[A-Za-z0-9_-]{43}$/.test(value);
/** `sst_` and a token: a stream token bound to one event stream (core/accounts/mintStreamToken.ts). */
export const generateStreamToken = () => `sst_${generateToken()}`;
export const isWellFormedStreamToken = (value: string) => value.startsWith('sst_') && isWellFormedToken(value.slice(4));
/** The part of a key that may be shown in listings and logs. */
export const apiKeyPrefix = (key: string) => key.slice(0, 10);

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
