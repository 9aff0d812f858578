import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';
import { appendCookie, readCookie, setCookie } from '../http/cookies.ts';
import { sessionToken } from '../http/session.ts';

/**
 * A secret carried from the POST that made it to the one page that shows it (after a 303, so a
 * reload posts nothing): a short-lived cookie holding it encrypted (AES-256-GCM) with a key derived
 * from the session token, which the server never stores. Nothing is kept server-side, the secret is
 * never in a URL or a log, only this session can read it, and showing it deletes the cookie: a reload
 * finds none and says it was already shown. A new API key and a new webhook's signing secret go so.
 */
const SHOWN_FOR_SECONDS = 300;

type CookieConfig = Pick<Config, 'PUBLIC_URL'>;

function oneTimeSecret<T>(cookie: string, purpose: string) {
  const cipherKey = (session: string) => createHmac('sha256', session).update(purpose).digest();
  return {
    /** Keeps `shown` for the next page of this session to read once. */
    keep(req: IncomingMessage, res: ServerResponse, config: CookieConfig, shown: T): void {
      const session = sessionToken(req, config);
      if (!session) return;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', cipherKey(session), iv);
      const sealed = Buffer.concat([cipher.update(JSON.stringify(shown), 'utf8'), cipher.final()]);
      const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
      appendCookie(res, setCookie(config, cookie, value, SHOWN_FOR_SECONDS));
    },
    /** What `keep` kept, once: the cookie is deleted with this answer; undefined when there is none (already shown). */
    take(req: IncomingMessage, res: ServerResponse, config: CookieConfig): T | undefined {
      const value = readCookie(req, config, cookie);
      const session = sessionToken(req, config);
      if (!value) return undefined;
      appendCookie(res, setCookie(config, cookie, '', 0));
      if (!session) return undefined;
      try {
        const bytes = Buffer.from(value, 'base64url');
        const decipher = createDecipheriv('aes-256-gcm', cipherKey(session), bytes.subarray(0, 12));
        decipher.setAuthTag(bytes.subarray(12, 28));
        const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
        return JSON.parse(plain) as T;
      } catch {
        // Sealed for another session (signed out and in again since): nothing to show.
        return undefined;
      }
    },
  };
}

/** A new API key, from POST /account/keys to /account/keys/new. */
const newKey = oneTimeSecret<{ key: string; scope: string }>('afterimage_new_key', 'afterimage new api key');
export const keepNewKey = newKey.keep;
export const takeNewKey = newKey.take;

/** A new webhook's signing secret, from its POST to /watchlists. */
const newWebhookSecret = oneTimeSecret<{ webhookId: string; secret: string }>('afterimage_new_webhook', 'afterimage new webhook secret');
export const keepWebhookSecret = newWebhookSecret.keep;
export const takeWebhookSecret = newWebhookSecret.take;
