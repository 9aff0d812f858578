import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.ts';
import { axeViolations, launchBrowser, visitSettled } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { rawRequest } from '../support/http-helpers.ts';

let db: TestDatabase;
let api: TestApi;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

/** The URLs of the page's scripts, styles and icons, as its HTML names them. */
const assetsOf = (html: string) =>
  [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((url) => url.startsWith('/api/docs/'));

describe('GET /api/docs', () => {
  it('an HTML page whose every file is served from here, with long lifetimes for versioned names', async () => {
    const page = await api.call('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<]|https?:\/\//);
    const assets = assetsOf(page.body);
    expect(assets.map((url) => url.replace(/.*\//, ''))).toEqual([
      'swagger-ui-5.35.0.css',
      'favicon-32x32-5.35.0.png',
      'favicon-16x16-5.35.0.png',
      'swagger-ui-bundle-5.35.0.js',
      expect.stringMatching(/^swagger-init-[0-9a-f]{12}\.js$/),
    ]);
    const types = { css: 'text/css', js: 'text/javascript', png: 'image/png' } as Record<string, string>;
    for (const url of assets) {
      const asset = await api.call(url);
      expect({
        url,
        status: asset.status,
        type: asset.headers.get('content-type')?.split(';')[0],
        cache: asset.headers.get('cache-control'),
      }).toEqual({ url, status: 200, type: types[url.slice(url.lastIndexOf('.') + 1)], cache: 'public, max-age=31536000, immutable' });
    }
  });

  it('sends its script and styles br or gzip as asked, decoding to the same bytes', async () => {
    const assets = assetsOf((await api.call('/api/docs')).body).filter((url) => /\.(js|css)$/.test(url));
    expect(assets).toHaveLength(3);
    for (const url of assets) {
      const plain = await rawRequest(`${api.url}${url}`, { headers: { 'Accept-Encoding': 'identity' } });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toContain('Accept-Encoding');
      for (const coding of ['br', 'gzip']) {
        for (const attempt of [1, 2]) {
          const coded = await rawRequest(`${api.url}${url}`, { headers: { 'Accept-Encoding': `${coding}, identity;q=0.5` } });
          // The starter script is too small to be worth coding; Swagger UI's script and styles are not.
          expect({ url, attempt, coding: coded.headers['content-encoding'], vary: coded.headers.vary }).toEqual({
            url,
            attempt,
            coding: plain.raw.length >= 1024 ? coding : undefined,
            vary: expect.stringContaining('Accept-Encoding'),
          });
          expect(Number(coded.headers['content-length'])).toBe(coded.raw.length);
          expect(coded.text).toBe(plain.text);
          if (plain.raw.length > 100_000) expect(coded.raw.length).toBeLessThan(plain.raw.length / 3);
        }
      }
    }
  });

  it('a file of another version is refused, naming the files there are', async () => {
    const stale = await api.call('/api/docs/assets/swagger-ui-bundle-5.34.0.js');
    expect(stale.status).toBe(400);
    expect(stale.body.error.message).toMatch(/no such file of the docs page .*swagger-ui-bundle-5\.35\.0\.js.*reload \/api\/docs/);
  });
});

/** axe-core's rules that Swagger UI's own markup breaks, which our page cannot mend (api/REFERENCE.md, The OpenAPI document). */
const SWAGGER_UI_OWN_VIOLATIONS = ['color-contrast', 'heading-order', 'nested-interactive'];

describe('/api/docs in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('renders every operation of the document, asks no other host for anything, logs no error', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => void requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warn') problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => void problems.push(`page error: ${(error as Error).message}`));
    page.on('requestfailed', (request) => void problems.push(`failed: ${request.url()}`));
    await visitSettled(page, `${api.url}/api/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 });
    const shown = await page.$$eval('.opblock-summary-path', (elements) => elements.map((element) => element.getAttribute('data-path')));
    const document = (await api.call('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map(() => path));
    expect(shown.sort()).toEqual(operations.sort());
    expect(await page.$$eval('.opblock-tag', (elements) => elements.length)).toBe(
      new Set(
        Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => (operation as { tags: string[] }).tags)),
      ).size,
    );
    expect(requested.filter((url) => new URL(url).origin !== api.url && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    // Every rule axe finds broken (any impact) is one of Swagger UI's own markup, listed in api/REFERENCE.md.
    const ours = (await axeViolations(page)).filter((violation) => !SWAGGER_UI_OWN_VIOLATIONS.includes(violation.id));
    expect(ours.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join('; ')}`)).toEqual([]);
    await page.close();
  }, 120_000);
});
