import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import type axe from 'axe-core';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * Pages driven as people use them: a real Chromium (from npm, @sparticuz/chromium), every console
 * error, page error, failed request and request to another host recorded as a problem, axe-core for
 * accessibility, and a screenshot of each page kept in test-artifacts/screenshots/.
 */

const SCREENSHOTS_DIR = join(import.meta.dirname, '..', '..', 'test-artifacts', 'screenshots');

/**
 * @sparticuz/chromium's flags without those for a serverless GPU and for pages of any origin: software GL
 * (SwiftShader) took about 40 % of a page test's CPU where no test draws with the GPU, and a browser
 * without web security or with mixed content allowed is not the browser people use.
 */
const DROPPED_FLAGS =
  /^--(use-gl|use-angle|enable-unsafe-swiftshader|in-process-gpu|ignore-gpu-blocklist|disable-web-security|allow-running-insecure-content)/;
const FLAGS = [...chromium.args.filter((flag) => !DROPPED_FLAGS.test(flag)), '--disable-gpu'];

export function launchBrowser(): Promise<Browser> {
  return chromium.executablePath().then((executablePath) => puppeteer.launch({ args: FLAGS, executablePath, headless: true }));
}

export interface WatchedPage {
  page: Page;
  problems: string[];
}

/** A tab that records what a person would call broken; `width` 390 is a phone. */
export async function openTab(browser: Browser, origin: string, width = 1280): Promise<WatchedPage> {
  const page = await browser.newPage();
  await page.setViewport({ width, height: 900 });
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()} (${message.location().url ?? ''})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${(error as Error).message}`));
  page.on('requestfailed', (request) => {
    // A stream the page closed on leaving is not a failure.
    if (request.failure()?.errorText !== 'net::ERR_ABORTED')
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) problems.push(`request to another host: ${url}`);
  });
  return { page, problems };
}

/**
 * A tab of a signed-in person (the `session` cookie of createSignedInUser, test/support/api.ts). This
 * Chromium runs as one process, with one browser context: every tab shares the cookie until this one
 * closes, when it is removed again (keep other tabs of the file closed meanwhile).
 */
export async function signedInTab(
  browser: Browser,
  origin: string,
  session: { name: string; value: string },
  width = 1280,
): Promise<WatchedPage> {
  const tab = await openTab(browser, origin, width);
  await browser.setCookie({ ...session, domain: new URL(origin).hostname, path: '/', httpOnly: true, sameSite: 'Lax' });
  tab.page.once('close', () => void browser.deleteMatchingCookies({ name: session.name, domain: new URL(origin).hostname }));
  return tab;
}

/**
 * How long no request may be in flight before a page counts as settled. Puppeteer's networkidle0 waits
 * 500 ms: the site's pages are served whole and their scripts request nothing late, and the browser files
 * navigate a few hundred times, so the half second was most of their time.
 */
const SETTLED_MS = 100;

/** Goes to `url` and waits until the page has loaded and no request has been in flight for SETTLED_MS. */
export async function visitSettled(page: Page, url: string) {
  const response = await page.goto(url);
  await page.waitForNetworkIdle({ idleTime: SETTLED_MS });
  return response;
}

/** Does `action` (a click, a key press) and waits for the navigation it starts to settle as visitSettled's does. */
export async function navigateSettled(page: Page, action: Promise<unknown>) {
  const [response] = await Promise.all([page.waitForNavigation(), action]);
  await page.waitForNetworkIdle({ idleTime: SETTLED_MS });
  return response;
}

/** axe-core's minified build: `axe.source` is the unminified one, twice its size, which each page parsed again. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations of any impact on the current page (WCAG 2.1 AA rules and best practices). */
export async function axeViolations(page: Page): Promise<axe.Result[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(() => (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }));
  return results.violations;
}

/** axe-core's serious and critical violations on the current page, each as a line naming a few of its elements. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page))
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes
          .map((node) => node.target.join(' '))
          .slice(0, 3)
          .join('; ')}`,
    );
}

/** Whether the page fits a phone's width without scrolling sideways. */
export const overflowsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

export async function saveScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  // optimizeForSpeed: zlib's fastest level, a fifth less of Chromium's CPU for a somewhat larger file.
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}.png`) as `${string}.png`, fullPage: true, optimizeForSpeed: true });
}
