/**
 * What search engines and people without a client see: a public summary as an HTML page, and the
 * sitemap of every public summary. Private summaries and stenograms never appear here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Config } from '../../core/config.ts';
import { notFound } from '../../core/errors.ts';
import { videoParams } from '../../core/schemas.ts';
import { findSummary } from '../../core/summaries/findSummary.ts';
import { countPublicSummaries, sitemapEntries, SITEMAP_URLS_PER_FILE } from '../../core/summaries/sitemapEntries.ts';
import { summaryPageUrl, toSummaryObject, type SummaryObject } from '../../core/summaries/summaryObject.ts';
import { clock } from '../../core/text/clock.ts';
import { escapeHtml } from '../../core/text/escapeHtml.ts';
import { publicOrigin } from '../http/publicOrigin.ts';
import { wholeNumber } from '../http/queryParams.ts';
import { defineRoute, handled, ignoredQuery } from '../http/route.ts';

const TAG = 'Public pages';

function send(res: ServerResponse, contentType: string, body: string) {
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'public, max-age=300' });
  res.end(body);
}

function renderPage(summary: SummaryObject, canonical: string): string {
  const title = `${summary.videoTitle ?? summary.title} — summary`;
  const points = summary.keyPoints.map((point) => `<li><a href="${escapeHtml(point.url)}">${clock(point.startSeconds)}</a> ${escapeHtml(point.text)}</li>`).join('\n');
  const paragraphs = (summary.detailedSummary ?? '').split(/\n\s*\n/).filter((text) => text.trim()).map((text) => `<p>${escapeHtml(text.trim())}</p>`).join('\n');
  const video = `https://www.youtube.com/watch?v=${summary.videoId}`;
  return `<!doctype html>
<html lang="${escapeHtml(summary.language ?? 'en')}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<meta name="description" content="${escapeHtml(summary.tldr ?? '')}">
<link rel="canonical" href="${escapeHtml(canonical)}">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}a{color:#0645ad}li{margin:.4rem 0}.meta{color:#666;font-size:.9rem}</style>
</head>
<body>
<main>
<h1>${escapeHtml(summary.title ?? '')}</h1>
<p class="meta"><a href="${escapeHtml(video)}">${escapeHtml(summary.videoTitle ?? summary.videoId)}</a>${summary.channelTitle ? ` · ${escapeHtml(summary.channelTitle)}` : ''}</p>
<h2>In short</h2>
<p>${escapeHtml(summary.tldr ?? '')}</p>
<h2>Key points</h2>
<ol>
${points}
</ol>
<h2>Summary</h2>
${paragraphs}
${summary.tags.length ? `<p class="meta">Tags: ${summary.tags.map(escapeHtml).join(', ')}</p>` : ''}
<p class="meta">Written by ${escapeHtml(summary.llmModel ?? 'unknown')} from the video's ${escapeHtml(summary.transcript?.kind ?? '')} subtitles (${escapeHtml(summary.transcript?.language ?? '')}), ${escapeHtml(summary.generatedAt ?? '')}.</p>
</main>
</body>
</html>
`;
}

const summaryPageRoute = defineRoute({
  method: 'GET',
  path: '/summaries/:videoId',
  tag: TAG,
  summary: 'A public summary as an HTML page (key points link to that moment of the video)',
  description: 'For people and search engines: public summaries only (a private or missing one is 404), with its canonical URL from PUBLIC_URL or the request\'s origin. The query string is ignored.',
  auth: 'public',
  query: ignoredQuery,
  params: videoParams,
  media: { 'text/html': z.string() },
  errors: ['NOT_FOUND'],
  async handler({ req, res, params, deps }) {
    const summary = await findSummary(deps.sql, params.videoId, { userId: null });
    if (!summary || summary.status !== 'ready') throw notFound(`video ${params.videoId} has no public summary`);
    send(res, 'text/html; charset=utf-8', renderPage(toSummaryObject(summary), publicOrigin(deps.config, req) + summaryPageUrl(params.videoId)));
    return handled;
  },
});

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
  description: 'Lists the page of every public summary (/summaries/{videoId}) with when it was generated, as absolute URLs from PUBLIC_URL or the request\'s origin. The query string is ignored.',
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
  description: `File n lists public summaries ${SITEMAP_URLS_PER_FILE.toLocaleString('en')} × (n − 1) + 1 onwards, oldest first; a file past the last is 404. The query string is ignored.`,
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

export const summaryPageRoutes = [summaryPageRoute, sitemapRoute, sitemapFileRoute];
