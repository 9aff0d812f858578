import { domainToUnicode } from 'node:url';
import { z } from 'zod';

/**
 * The one form of an email address that accounts store and look up, so the same address typed
 * differently is one account: Unicode NFC (`josé` typed precomposed or as e + a combining accent is
 * the same text), the local part lower-cased (accounts have always matched it in any case), and the
 * domain mapped as IDNA does (UTS #46: lower-cased, NFC, full-width forms folded, `xn--` labels shown
 * in Unicode); a domain IDNA refuses is only lower-cased, and the shape check then decides.
 */
export function normalizeEmail(text: string): string {
  const address = text.trim();
  const at = address.lastIndexOf('@');
  const local = (at < 0 ? address : address.slice(0, at)).toLowerCase().normalize('NFC');
  if (at < 0) return local;
  const domain = address.slice(at + 1);
  return `${local}@${domainToUnicode(domain) || domain.toLowerCase().normalize('NFC')}`;
}

/** An email address as typed in a form or on the command line: normalised (normalizeEmail), then its shape checked. */
export const email = z
  .string()
  .transform(normalizeEmail)
  .pipe(
    z
      .string()
      .max(320)
      .regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, { message: 'expected an email address' }),
  );
