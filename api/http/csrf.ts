import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';
import { AppError } from '../../core/errors.ts';
import { generateToken } from '../../core/keys.ts';
import { appendCookie, readCookie, setCookie } from './cookies.ts';
import { sessionToken } from './session.ts';

/**
 * CSRF protection for every form that changes something: its hidden field `_csrf` holds
 * HMAC-SHA256(secret, form action). The secret is one another site can neither read nor set: the
 * session token itself for a signed-in visitor (never stored, nothing to keep in step), and for
 * someone not signed in (/login, /register) a random cookie of its own, a double-submit cookie whose
 * field is bound to it by the HMAC. Binding the action means a field copied from one form is refused
 * by another. SameSite=Lax on both cookies is a second wall: another site's POST carries neither.
 */
const CSRF_COOKIE = 'afterimage_csrf';
export const CSRF_FIELD = '_csrf';

type CookieConfig = Pick<Config, 'PUBLIC_URL'>;

const sign = (secret: string, action: string) => createHmac('sha256', secret).update(`afterimage form ${action}`).digest('base64url');
const formSecret = (req: IncomingMessage, config: CookieConfig) => sessionToken(req, config) ?? readCookie(req, config, CSRF_COOKIE);

/** The `_csrf` value of a form posting to `action`; sets the double-submit cookie when the visitor has neither cookie. */
export function formToken(
  req: IncomingMessage,
  res: Pick<ServerResponse, 'getHeader' | 'setHeader'>,
  config: CookieConfig,
  action: string,
): string {
  let secret = formSecret(req, config);
  if (!secret) {
    secret = generateToken();
    appendCookie(res, setCookie(config, CSRF_COOKIE, secret));
  }
  return sign(secret, action);
}

/** Refuses (403 FORBIDDEN) a form posted to `action` whose `_csrf` is missing or not this visitor's. */
export function checkFormToken(req: IncomingMessage, config: CookieConfig, action: string, submitted: unknown): void {
  const secret = formSecret(req, config);
  const expected = secret ? Buffer.from(sign(secret, action)) : undefined;
  const given = Buffer.from(typeof submitted === 'string' ? submitted : '');
  if (!expected || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    const cause = secret
      ? 'its security token is missing or out of date'
      : 'your browser sent no cookie with it (this site needs cookies to sign in)';
    throw new AppError('FORBIDDEN', `This form was refused: ${cause}. Reload the page and send the form again.`);
  }
}
