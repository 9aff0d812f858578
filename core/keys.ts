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
const sha256 = (secret: string) => createHash('sha256').update(secret).digest();
export const hashApiKey = sha256;

const STREAM_TOKEN_SHAPE = /^sst_[A-Za-z0-9_-]{43}$/;
/** `sst_` and 32 random bytes in base64url: a stream token (core/accounts/mintStreamToken.ts). */
export const generateStreamToken = () => `sst_${randomBytes(32).toString('base64url')}`;
export const isWellFormedStreamToken = (value: string) => STREAM_TOKEN_SHAPE.test(value);
export const hashStreamToken = sha256;
/** The part of a key that may be shown in listings and logs. */
export const apiKeyPrefix = (key: string) => key.slice(0, 10);

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
