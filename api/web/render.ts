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

/** The headers every HTML page carries, whatever its status. */
const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
} as const;

/** A whole document: preact escapes every text and attribute value it renders. */
export const renderDocument = (page: VNode): string => `<!doctype html>\n${renderToString(page)}`;

export function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  // Pages show what the visitor may see (their tier, their private items): never stored by a shared cache.
  res.writeHead(status, { ...PAGE_HEADERS, 'Cache-Control': 'private, no-cache', 'Content-Length': Buffer.byteLength(html), ...headers });
  res.end(html);
}
