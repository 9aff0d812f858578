import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';
import { appendCookie, readCookie, setCookie } from '../http/cookies.ts';
import { sessionToken } from '../http/session.ts';

/**
 * A new API key carried from the POST that made it to the one page that shows it (after a 303, so a
 * reload posts nothing): a short-lived cookie holding the key encrypted (AES-256-GCM) with a key derived
 * from the session token, which the server never stores. Nothing is kept server-side, the key is never
 * in a URL or a log, only this session can read it, and showing it deletes the cookie: a reload finds
 * none and says the key was already shown.
 */
const NEW_KEY_COOKIE = 'afterimage_new_key';
const SHOWN_FOR_SECONDS = 300;

type CookieConfig = Pick<Config, 'PUBLIC_URL'>;

const cipherKey = (session: string) => createHmac('sha256', session).update('afterimage new api key').digest();

/** Keeps `shown` for the next page of this session to read once. */
export function keepNewKey(req: IncomingMessage, res: ServerResponse, config: CookieConfig, shown: { key: string; scope: string }): void {
  const session = sessionToken(req, config);
  if (!session) return;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', cipherKey(session), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(shown), 'utf8'), cipher.final()]);
  const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  appendCookie(res, setCookie(config, NEW_KEY_COOKIE, value, SHOWN_FOR_SECONDS));
}

/** The key kept by keepNewKey, once: the cookie is deleted with this answer; undefined when there is none (already shown). */
export function takeNewKey(req: IncomingMessage, res: ServerResponse, config: CookieConfig): { key: string; scope: string } | undefined {
  const value = readCookie(req, config, NEW_KEY_COOKIE);
  const session = sessionToken(req, config);
  if (!value) return undefined;
  appendCookie(res, setCookie(config, NEW_KEY_COOKIE, '', 0));
  if (!session) return undefined;
  try {
    const bytes = Buffer.from(value, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', cipherKey(session), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(plain) as { key: string; scope: string };
  } catch {
    // Sealed for another session (signed out and in again since): nothing to show.
    return undefined;
  }
}
