import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_SHAPE = /^tsk_[A-Za-z0-9]{48}$/;

/** `tsk_` and 48 characters drawn uniformly from 62 (about 286 bits of entropy). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 48; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `tsk_${body}`;
}

export const isWellFormedApiKey = (value: string) => KEY_SHAPE.test(value);
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest();
/** The part of a key that may be shown in listings and logs. */
export const apiKeyPrefix = (key: string) => key.slice(0, 10);

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
