import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchBrowser, openTab, overflowsWidth, saveScreenshot, visitSettled } from '../support/browser.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
let api: TestApi;
let browser: Browser;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await db?.drop();
});

describe('the site', () => {
  it('serves the home page in the layout, with a strict Content-Security-Policy and hashed assets', async () => {
    const home = await fetch(`${api.url}/`, { headers: { Accept: 'text/html' } });
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(home.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(home.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const html = await home.text();
    const stylesheet = /href="(\/assets\/site\.[0-9a-f]{12}\.css)"/.exec(html)?.[1];
    expect(stylesheet).toBeDefined();
    const css = await fetch(`${api.url}${stylesheet}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await fetch(`${api.url}/assets/site.000000000000.css`)).status).toBe(404);
  });

  it('answers a browser with an error page and a program with the JSON envelope', async () => {
    const page = await fetch(`${api.url}/no-such-page`, { headers: { Accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('There is no page at /no-such-page.');
    const wrongMethod = await fetch(`${api.url}/`, { method: 'DELETE', headers: { Accept: 'text/html' } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    const json = await api.call('/api/no-such-endpoint', { headers: { Accept: 'text/html' } });
    expect(json.status).toBe(404);
    expect(json.body.error.code).toBe('NOT_FOUND');
  });

  it('works in a real browser: no console error, no other host, accessible, fits a phone', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, api.url, width);
      await visitSettled(page, `${api.url}/`);
      expect(await page.$eval('h1', (element) => element.textContent)).toBe('Search the archive');
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(await overflowsWidth(page)).toBe(false);
      await saveScreenshot(page, `home-${width}`);
      await visitSettled(page, `${api.url}/missing`);
      expect(await page.$eval('h1', (element) => element.textContent)).toBe('Not found');
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(problems.filter((problem) => !problem.includes('404'))).toEqual([]);
      await page.close();
    }
  });

  it('submits the search box from the keyboard', async () => {
    const { page } = await openTab(browser, api.url);
    await page.goto(`${api.url}/`);
    await page.focus('#home-q');
    await page.keyboard.type('interview');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).pathname).toBe('/search');
    expect(new URL(page.url()).searchParams.get('q')).toBe('interview');
    await page.close();
  });
});
