import type { ServerResponse } from 'node:http';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * Pages load only this server's own files: no inline script or style, no other host, no framing.
 * Images may be data: URLs (the deletion timeline's SVG is inline markup, not an image).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const HTML_TYPE = 'text/html; charset=utf-8';

/** The headers every HTML page carries, whatever its status (its Content-Type besides). */
export const PAGE_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'Referrer-Policy': 'same-origin',
} as const;

/** A whole document: preact escapes every text and attribute value it renders. */
export const renderDocument = (page: VNode): string => `<!doctype html>\n${renderToString(page)}`;

/** Pages show what the visitor may see (their tier, their private items): never stored by a shared cache. */
export const PRIVATE_PAGE = { 'Cache-Control': 'private, no-cache' } as const;

/** An error page: no validators, no compression (it is small and short-lived). */
export function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': HTML_TYPE,
    ...PAGE_HEADERS,
    ...PRIVATE_PAGE,
    'Content-Length': Buffer.byteLength(html),
    ...headers,
  });
  res.end(html);
}
