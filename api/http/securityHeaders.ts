import type { Config } from '../../core/config.ts';

/** A year, as preload lists ask; subdomains are not named: they may be other services of the operator's. */
const HSTS_MAX_AGE_SECONDS = 31_536_000;

/**
 * Headers every answer carries, whatever sent it (a route, a page, a file, an asset, an error): no
 * content sniffing, so a subtitle or an uploaded-looking file is never run as HTML or script; and
 * HSTS when the operator declared an https PUBLIC_URL, never guessed from a request's X-Forwarded-Proto
 * (browsers ignore it over plain http, so it is sent on every answer alike).
 */
export function securityHeaders(config: Pick<Config, 'PUBLIC_URL'>): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    ...(config.PUBLIC_URL?.startsWith('https:') ? { 'Strict-Transport-Security': `max-age=${HSTS_MAX_AGE_SECONDS}` } : {}),
  };
}
