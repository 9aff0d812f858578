import { createHash } from 'node:crypto';

/**
 * A counter's subject for something that is not a user or a key (a client address, an email typed into
 * a sign-in form): a stable uuid-shaped hash, so usage_counters never holds the address or email itself.
 */
export function hashedSubject(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
