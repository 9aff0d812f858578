import type { IncomingMessage, ServerResponse } from 'node:http';
import { addVary } from './representation.ts';

/** Where browsers on other origins may call: the REST API and the MCP endpoint (pages and sitemaps are not for scripts). */
const CORS_PATH = /^\/(api|mcp)(\/|$)/;

/** Request headers a cross-origin page may send: keys, JSON bodies, resuming streams, request ids, MCP sessions, revalidation and ranges. */
const ALLOWED_HEADERS = [
  'X-API-Key',
  'Authorization',
  'Content-Type',
  'Last-Event-ID',
  'X-Request-Id',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'If-None-Match',
  'Range',
].join(', ');

/** Response headers a cross-origin page may read (beyond the CORS-safelisted ones): quotas, validators, where a resource is, how to authenticate. */
const EXPOSED_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
  'ETag',
  'Location',
  'X-Request-Id',
  'WWW-Authenticate',
];

/** The MCP transport numbers its sessions in a response header the client must read. */
const MCP_EXPOSED_HEADERS = [...EXPOSED_HEADERS, 'Mcp-Session-Id'].join(', ');

const METHODS = { api: 'GET, HEAD, POST, PUT, PATCH, DELETE', mcp: 'GET, POST, DELETE' };

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for /api and /mcp: pages on one of `origins` (CORS_ORIGINS, exact) may call them; any other
 * origin gets no Access-Control-Allow-* header at all, so its browser keeps the answer from it.
 * Preflights are answered here, before authentication (a browser sends no key with them). The grant
 * is set before the route runs, so errors carry it too and the page can read their envelope.
 * Credentials (cookies) are never granted: keys travel in headers, and no cookie means anything here.
 */
export function cors(origins: readonly string[]) {
  const allowed = new Set(origins);
  /** true when it answered the request (a preflight); the request goes on otherwise. */
  return (req: IncomingMessage & { path: string }, res: ServerResponse): boolean => {
    const area = CORS_PATH.exec(req.path)?.[1] as 'api' | 'mcp' | undefined;
    if (!area) return false;
    addVary(res, ['Origin']);
    const origin = req.headers.origin;
    const granted = origin !== undefined && allowed.has(origin);
    const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (granted) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      if (!preflight) res.setHeader('Access-Control-Expose-Headers', area === 'mcp' ? MCP_EXPOSED_HEADERS : EXPOSED_HEADERS.join(', '));
    }
    if (!preflight) return false;
    if (granted) {
      res.setHeader('Access-Control-Allow-Methods', METHODS[area]);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    // 204 either way: without the grant the browser refuses the call itself, and says why in its console.
    res.writeHead(204);
    res.end();
    return true;
  };
}
