import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';

/**
 * The service's cookies: HttpOnly (no script reads them), SameSite=Lax (another site's form posts
 * arrive without them), Path=/, and Secure with the __Host- prefix when PUBLIC_URL is https (sent over
 * TLS only, and no subdomain can set one in their place).
 */
const secure = (config: Pick<Config, 'PUBLIC_URL'>) => config.PUBLIC_URL?.startsWith('https:') ?? false;

const cookieName = (config: Pick<Config, 'PUBLIC_URL'>, name: string) => (secure(config) ? `__Host-${name}` : name);

/** A Set-Cookie value; maxAgeSeconds 0 deletes the cookie, none keeps it until the browser closes. */
export function setCookie(config: Pick<Config, 'PUBLIC_URL'>, name: string, value: string, maxAgeSeconds?: number): string {
  const maxAge = maxAgeSeconds === undefined ? '' : `; Max-Age=${maxAgeSeconds}`;
  return `${cookieName(config, name)}=${value}; Path=/${maxAge}; HttpOnly; SameSite=Lax${secure(config) ? '; Secure' : ''}`;
}

/** Adds a Set-Cookie header to those the response already has. */
export function appendCookie(res: Pick<ServerResponse, 'getHeader' | 'setHeader'>, cookie: string): void {
  const existing = res.getHeader('Set-Cookie');
  res.setHeader('Set-Cookie', [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)]), cookie]);
}

/** A cookie sent with the request; values are the service's own tokens (base64url), never decoded. */
export function readCookie(req: IncomingMessage, config: Pick<Config, 'PUBLIC_URL'>, name: string): string | undefined {
  const wanted = cookieName(config, name);
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === wanted) return pair.slice(at + 1).trim() || undefined;
  }
  return undefined;
}
