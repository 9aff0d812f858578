/**
 * What search engines read: the sitemap of every public summary's page (api/web/pages/summary.tsx).
 * Private summaries and stenograms never appear here.
 */
import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { sitemapEntries, SITEMAP_URLS_PER_FILE } from '../../core/summaries/sitemapEntries.ts';
import { countPublicSummaries } from '../../core/summaries/summaryFacets.ts';
import { summaryPageUrl } from '../../core/summaries/summaryObject.ts';
import { escapeHtml } from '../../core/text/escapeHtml.ts';
import { publicOrigin } from '../http/publicOrigin.ts';
import { wholeNumber } from '../http/input.ts';
import { sendAnswer } from '../http/representation.ts';
import { defineRoute, handled, ignoredQuery, PUBLIC_PAGE_CACHE, type ApiDeps, type Exchange } from '../http/route.ts';

const TAG = 'Public pages';

/** What every page route shares: public, with a per-address budget sized for crawlers (pageRequestsPerMinute), cacheable. */
const pageAccess = { auth: 'public', query: ignoredQuery, requestLimit: 'pageRequestsPerMinute', cache: PUBLIC_PAGE_CACHE } as const;

const XML = 'application/xml; charset=utf-8';

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}\n`;
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** A sitemap is validated by its hash only: a deleted summary changes it without making it any newer. */
async function sendSitemapFile(ctx: Exchange & { deps: Pick<ApiDeps, 'sql' | 'config'> }, file: number) {
  const origin = publicOrigin(ctx.deps.config, ctx.req);
  const entries = await sitemapEntries(ctx.deps.sql, file);
  const urls = entries.map(
    (entry) =>
      `<url><loc>${escapeHtml(origin + summaryPageUrl(entry.videoId))}</loc><lastmod>${entry.generatedAt.toISOString()}</lastmod></url>`,
  );
  await sendAnswer(ctx, xml(`<urlset xmlns="${SITEMAP_NS}">\n${urls.join('\n')}\n</urlset>`), {
    contentType: XML,
    cache: PUBLIC_PAGE_CACHE,
  });
}

const sitemapRoute = defineRoute({
  method: 'GET',
  path: '/sitemap.xml',
  tag: TAG,
  summary: `The sitemap of public summaries; past ${SITEMAP_URLS_PER_FILE.toLocaleString('en')} URLs, a sitemap index of /sitemaps/summaries/{n}`,
  description:
    "Lists the page of every public summary (/summaries/{videoId}) with when it was generated, as absolute URLs from PUBLIC_URL or the request's origin. The query string is ignored.",
  ...pageAccess,
  media: { 'application/xml': z.string() },
  async handler(ctx) {
    const total = await countPublicSummaries(ctx.deps.sql);
    if (total <= SITEMAP_URLS_PER_FILE) {
      await sendSitemapFile(ctx, 1);
      return handled;
    }
    const origin = publicOrigin(ctx.deps.config, ctx.req);
    const files = Array.from(
      { length: Math.ceil(total / SITEMAP_URLS_PER_FILE) },
      (_, index) => `<sitemap><loc>${escapeHtml(`${origin}/sitemaps/summaries/${index + 1}`)}</loc></sitemap>`,
    );
    await sendAnswer(ctx, xml(`<sitemapindex xmlns="${SITEMAP_NS}">\n${files.join('\n')}\n</sitemapindex>`), {
      contentType: XML,
      cache: PUBLIC_PAGE_CACHE,
    });
    return handled;
  },
});

const sitemapFileRoute = defineRoute({
  method: 'GET',
  path: '/sitemaps/summaries/:file',
  tag: TAG,
  summary: 'One file of the sitemap index (when there are more public summaries than one sitemap holds)',
  description: `File n lists public summaries ${SITEMAP_URLS_PER_FILE.toLocaleString('en')} × (n − 1) + 1 onwards, oldest first; a file past the last is 404. The query string is ignored.`,
  ...pageAccess,
  params: z.strictObject({ file: wholeNumber('file', 1, 100_000) }),
  media: { 'application/xml': z.string() },
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { params, deps } = ctx;
    const total = await countPublicSummaries(deps.sql);
    if (params.file > Math.max(1, Math.ceil(total / SITEMAP_URLS_PER_FILE)))
      throw notFound(`the sitemap has ${Math.max(1, Math.ceil(total / SITEMAP_URLS_PER_FILE))} file(s), not ${params.file}`);
    await sendSitemapFile(ctx, params.file);
    return handled;
  },
});

export const summaryPageRoutes = [sitemapRoute, sitemapFileRoute];
