/**
 * What search engines read: the sitemap of every public summary's page (api/web/pages/summary.tsx).
 * Private summaries and stenograms never appear here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Config } from '../../core/config.ts';
import { notFound } from '../../core/errors.ts';
import { countPublicSummaries, sitemapEntries, SITEMAP_URLS_PER_FILE } from '../../core/summaries/sitemapEntries.ts';
import { summaryPageUrl } from '../../core/summaries/summaryObject.ts';
import { escapeHtml } from '../../core/text/escapeHtml.ts';
import { wholeNumber } from '../http/queryParams.ts';
import { defineRoute, handled, ignoredQuery } from '../http/route.ts';

const TAG = 'Public pages';
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** Absolute URLs need the address the public reaches: PUBLIC_URL, else what the request was sent to. */
export function publicOrigin(config: Config, req: IncomingMessage): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, '');
  const forwardedHost = config.TRUST_PROXY ? String(req.headers['x-forwarded-host'] ?? '').split(',')[0]!.trim() : '';
  const host = [forwardedHost, req.headers.host ?? ''].find((candidate) => HOST.test(candidate)) ?? `${config.HOST}:${config.PORT}`;
  const forwardedProto = config.TRUST_PROXY ? String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() : '';
  return `${forwardedProto === 'https' ? 'https' : 'http'}://${host}`;
}

function send(res: ServerResponse, contentType: string, body: string) {
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'public, max-age=300' });
  res.end(body);
}

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}\n`;
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

async function sendSitemapFile(req: IncomingMessage, res: ServerResponse, deps: { sql: Parameters<typeof sitemapEntries>[0]; config: Config }, file: number) {
  const origin = publicOrigin(deps.config, req);
  const entries = await sitemapEntries(deps.sql, file);
  const urls = entries.map((entry) => `<url><loc>${escapeHtml(origin + summaryPageUrl(entry.videoId))}</loc><lastmod>${entry.generatedAt.toISOString()}</lastmod></url>`);
  send(res, 'application/xml; charset=utf-8', xml(`<urlset xmlns="${SITEMAP_NS}">\n${urls.join('\n')}\n</urlset>`));
}

const sitemapRoute = defineRoute({
  method: 'GET',
  path: '/sitemap.xml',
  tag: TAG,
  summary: `The sitemap of public summaries; past ${SITEMAP_URLS_PER_FILE.toLocaleString('en')} URLs, a sitemap index of /sitemaps/summaries/{n}`,
  auth: 'public',
  query: ignoredQuery,
  media: { 'application/xml': z.string() },
  async handler({ req, res, deps }) {
    const total = await countPublicSummaries(deps.sql);
    if (total <= SITEMAP_URLS_PER_FILE) {
      await sendSitemapFile(req, res, deps, 1);
      return handled;
    }
    const origin = publicOrigin(deps.config, req);
    const files = Array.from({ length: Math.ceil(total / SITEMAP_URLS_PER_FILE) }, (_, index) => `<sitemap><loc>${escapeHtml(`${origin}/sitemaps/summaries/${index + 1}`)}</loc></sitemap>`);
    send(res, 'application/xml; charset=utf-8', xml(`<sitemapindex xmlns="${SITEMAP_NS}">\n${files.join('\n')}\n</sitemapindex>`));
    return handled;
  },
});

const sitemapFileRoute = defineRoute({
  method: 'GET',
  path: '/sitemaps/summaries/:file',
  tag: TAG,
  summary: 'One file of the sitemap index (when there are more public summaries than one sitemap holds)',
  auth: 'public',
  query: ignoredQuery,
  params: z.strictObject({ file: wholeNumber('file', 1, 100_000) }),
  media: { 'application/xml': z.string() },
  errors: ['NOT_FOUND'],
  async handler({ req, res, params, deps }) {
    const total = await countPublicSummaries(deps.sql);
    if (params.file > Math.max(1, Math.ceil(total / SITEMAP_URLS_PER_FILE))) throw notFound(`the sitemap has ${Math.max(1, Math.ceil(total / SITEMAP_URLS_PER_FILE))} file(s), not ${params.file}`);
    await sendSitemapFile(req, res, deps, params.file);
    return handled;
  },
});

export const summaryPageRoutes = [sitemapRoute, sitemapFileRoute];
