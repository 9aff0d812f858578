import type { IncomingMessage } from 'node:http';
import type { Config } from '../../core/config.ts';

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * The address the public reaches this service at, for absolute URLs: PUBLIC_URL, else what the
 * request was sent to (X-Forwarded-Host and -Proto only behind a trusted proxy, TRUST_PROXY).
 */
export function publicOrigin(config: Config, req: IncomingMessage): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, '');
  const forwardedHost = config.TRUST_PROXY
    ? String(req.headers['x-forwarded-host'] ?? '')
        .split(',')[0]!
        .trim()
    : '';
  const host = [forwardedHost, req.headers.host ?? ''].find((candidate) => HOST.test(candidate)) ?? `${config.HOST}:${config.PORT}`;
  const forwardedProto = config.TRUST_PROXY
    ? String(req.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]!
        .trim()
    : '';
  return `${forwardedProto === 'https' ? 'https' : 'http'}://${host}`;
}
