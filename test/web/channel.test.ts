import { randomUUID } from 'node:crypto';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchChannel } from '../../core/crawl/startSearch.ts';
import { createLogger } from '../../core/log.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { accessibilityViolations, launchBrowser, openTab, overflowsWidth, saveScreenshot, visitSettled } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { startSearchStack } from '../support/stack.ts';

// A channel page open while a real worker crawls the channel from a slow source: its videos arrive on the page.
let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let browser: Browser;
let release: () => void;
let releaseLarge: () => void;
const { channel, videos } = generateChannel(30);
/** A channel of more videos than the page adds live (200), crawled in about 12 seconds. */
const large = generateChannel(300, 'L');
const DELETED = [videos[3]!.videoId, videos[4]!.videoId, videos[17]!.videoId];

/** The fake source, held until `release`, then a page of 5 videos every 800 ms; the large channel's held until `releaseLarge`, then 25 every second (four crawl steps of 3 s each: counts shown between them). */
function slowSource(): VideoSource {
  const gate = new Promise<void>((resolve) => (release = resolve));
  const largeGate = new Promise<void>((resolve) => (releaseLarge = resolve));
  const source = fakeSource({ name: 'youtube_api', channel, videos, pageSize: 5, gate });
  const largeSource = fakeSource({ name: 'youtube_api', channel: large.channel, videos: large.videos, pageSize: 25, gate: largeGate });
  return {
    ...source,
    async resolveChannel(query) {
      return (await source.resolveChannel(query)) ?? largeSource.resolveChannel(query);
    },
    async listVideos(listed, cursor) {
      if (listed.channelId === large.channel.channelId) {
        await largeGate;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return largeSource.listVideos(listed, cursor);
      }
      await gate;
      // 800 ms a page: six pages outlast a crawl step's 3 s budget, so the videos are stored (and streamed) in more than one step.
      await new Promise((resolve) => setTimeout(resolve, 800));
      return source.listVideos(listed, cursor);
    },
  };
}

let sources: VideoSource[];

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 100_000 } });
  sources = [slowSource()];
  stack = await startSearchStack(db, {}, { sources });
  browser = await launchBrowser();
});

afterAll(async () => {
  release?.();
  releaseLarge?.();
  await browser?.close();
  await stack?.close();
  await db?.drop();
});

const channelUrl = (query = '') => `${stack.api.url}/channels/${channel.channelId}${query}`;

describe('the channel page', () => {
  it('receives the videos of a crawl running while it is open, without a reload', async () => {
    // What the search page does for an anonymous visitor: start the search, then show the channel following it.
    const started = await searchChannel(
      { sql: db.sql, sources, log: createLogger('silent'), sourceWaitBudgetMs: stack.api.config.SOURCE_WAIT_BUDGET_MS },
      { query: channel.channelId, userId: null },
      async () => {},
    );
    const { page, problems } = await openTab(browser, stack.api.url);
    await page.goto(channelUrl(`?session=${started.sessionId}`), { waitUntil: 'load' });
    expect(await page.$eval('h1', (element) => element.textContent)).toBe(channel.title);
    expect(await page.$$eval('#videos-list li', (items) => items.length)).toBe(0);
    expect(await page.$eval('#crawl-status', (element) => element.getAttribute('aria-live'))).toBe('polite');
    expect(await page.$eval('.crawl a', (element) => element.getAttribute('href'))).toBe(
      `/channels/${channel.channelId}?session=${started.sessionId}`,
    );
    await page.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true));

    release();
    await page.waitForFunction(
      () => document.querySelectorAll('#videos-list li').length > 0 && document.querySelectorAll('#videos-list li').length < 30,
      { timeout: 20_000 },
    );
    expect(await page.$eval('#crawl-status', (element) => element.textContent)).toMatch(
      /^\d+ videos kept so far, crawling…$|^A search of this channel is running/,
    );
    await page.waitForFunction(() => document.getElementById('crawl-status')!.textContent!.startsWith('Search complete: 30 videos kept.'), {
      timeout: 20_000,
    });
    expect(await page.$$eval('#videos-list li', (items) => items.length)).toBe(30);
    expect(await page.$eval(`#videos-list li[data-video-id="${videos[0]!.videoId}"] a`, (element) => element.getAttribute('href'))).toBe(
      `/videos/${videos[0]!.videoId}`,
    );
    expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
    expect(await page.$('#videos-empty')).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows only the deleted videos with the filter, and their deletions by month as a labelled SVG with a table', async () => {
    for (const [index, videoId] of DELETED.entries()) {
      const since = ['2021-03-10T12:00:00Z', '2021-03-20T12:00:00Z', '2021-06-02T12:00:00Z'][index]!;
      await db.sql`update videos set status = 'deleted', status_reason = 'copyright', status_since = ${since} where video_id = ${videoId}`;
    }
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, stack.api.url, width);
      await visitSettled(page, channelUrl());
      expect(await page.$eval('.facts', (element) => element.textContent)).toContain('27 live · 3 deleted · 0 re-uploaded');
      const label = await page.$eval('svg[role="img"]', (svg) =>
        svg
          .getAttribute('aria-labelledby')!
          .split(' ')
          .map((id) => document.getElementById(id)!.textContent)
          .join(' | '),
      );
      expect(label).toBe(
        `Deletions of ${channel.title}'s videos by month | 3 deletions from March 2021 to June 2021; the most in March 2021 (2).`,
      );
      expect(await page.$$eval('svg rect.bar', (bars) => bars.map((bar) => bar.querySelector('title')!.textContent))).toEqual([
        'March 2021: 2 deletions',
        'June 2021: 1 deletion',
      ]);
      expect(await page.$$eval('.deletion-timeline tbody tr', (rows) => rows.map((row) => row.textContent))).toEqual([
        'March 20212',
        'June 20211',
      ]);

      await page.select('#show', 'deleted');
      await Promise.all([page.waitForNavigation(), page.click('form.filters button')]);
      expect(new URL(page.url()).searchParams.get('show')).toBe('deleted');
      expect((await page.$$eval('#videos-list li', (items) => items.map((item) => item.getAttribute('data-video-id')))).sort()).toEqual(
        [...DELETED].sort(),
      );
      expect(
        await page.$$eval('#videos-list .badge', (badges) => badges.map((badge) => `${badge.className}: ${badge.textContent}`)),
      ).toEqual(Array(3).fill('badge deleted: Deleted: removed after a copyright claim'));
      expect(await page.$$eval('#videos-list .deleted-on time', (times) => times.map((time) => time.textContent).sort())).toEqual([
        '2021-03-10',
        '2021-03-20',
        '2021-06-02',
      ]);
      expect(await overflowsWidth(page)).toBe(false);
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
      await saveScreenshot(page, `channel-${width}`);
      await page.close();
    }
  });

  it('pages through the videos without script, and is accessible while following a search', async () => {
    const { page, problems } = await openTab(browser, stack.api.url, 390);
    await visitSettled(page, channelUrl());
    expect(await page.$$eval('#videos-list li', (items) => items.length)).toBe(24);
    await Promise.all([page.waitForNavigation(), page.click('a[rel="next"]')]);
    expect(await page.$$eval('#videos-list li', (items) => items.length)).toBe(6);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('loads more from the archives through the continue form, as a new session of the visitor', async () => {
    const started = await searchChannel(
      { sql: db.sql, sources, log: createLogger('silent'), sourceWaitBudgetMs: stack.api.config.SOURCE_WAIT_BUDGET_MS },
      { query: channel.channelId, userId: null },
      async () => {},
    );
    const { page, problems } = await openTab(browser, stack.api.url);
    await page.goto(channelUrl(`?session=${started.sessionId}`), { waitUntil: 'load' });
    await page.waitForFunction(() => document.getElementById('crawl-status')?.textContent?.startsWith('Search complete') ?? true, {
      timeout: 20_000,
    });
    await visitSettled(page, channelUrl(`?session=${started.sessionId}`));
    await Promise.all([page.waitForNavigation(), page.click('form.continue button')]);
    const next = new URL(page.url()).searchParams.get('session');
    expect(next).toMatch(/^[0-9a-f-]{36}$/);
    expect(next).not.toBe(started.sessionId);
    // No archive look-ups on this server: the new session ends at once, uncharged.
    expect(await page.$eval('main .notice', (element) => element.textContent)).toContain('The search of this channel has finished.');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('counts a long crawl at least once a second while it runs, and says where the videos past the first 200 are', async () => {
    const started = await searchChannel(
      { sql: db.sql, sources, log: createLogger('silent'), sourceWaitBudgetMs: stack.api.config.SOURCE_WAIT_BUDGET_MS },
      { query: large.channel.channelId, userId: null },
      async () => {},
    );
    const { page, problems } = await openTab(browser, stack.api.url);
    await page.goto(`${stack.api.url}/channels/${large.channel.channelId}?session=${started.sessionId}`, { waitUntil: 'load' });
    expect(await page.$eval('#kept-counts', (element) => element.textContent)).toBe('0 live · 0 deleted · 0 re-uploaded');
    // Every text the status line and the "Videos kept" line show, with whether the crawl was still running then.
    await page.evaluate(() => {
      const seen: Array<{ status: string; kept: string }> = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      const status = document.getElementById('crawl-status')!;
      const kept = document.getElementById('kept-counts')!;
      const note = () => seen.push({ status: status.textContent!, kept: kept.textContent! });
      new MutationObserver(note).observe(status, { childList: true, characterData: true, subtree: true });
    });
    releaseLarge();
    await page.waitForFunction(() => document.getElementById('crawl-status')!.textContent!.startsWith('Search complete'), {
      timeout: 80_000,
    });
    const seen = await page.evaluate(() => (window as unknown as { seen: Array<{ status: string; kept: string }> }).seen);
    const whileCrawling = seen.filter((entry) => entry.status.endsWith('crawling…'));
    // Several distinct counts before the end, each with the facts' line counting the same videos.
    expect(new Set(whileCrawling.map((entry) => entry.status)).size).toBeGreaterThanOrEqual(2);
    for (const entry of whileCrawling) {
      const kept = Number(/^(\d+) videos kept so far/.exec(entry.status)![1]);
      expect(entry.kept).toBe(`${kept} live · 0 deleted · 0 re-uploaded`);
    }
    expect(seen.at(-1)!.status).toMatch(/^Search complete: 300 videos kept\./);
    expect(await page.$eval('#kept-counts', (element) => element.textContent)).toBe('300 live · 0 deleted · 0 re-uploaded');
    expect(await page.$$eval('#videos-list li', (items) => items.length)).toBe(200);
    expect(await page.$eval('#videos-count', (element) => element.textContent)).toBe('300 videos');
    expect(await page.$eval('#videos-cap', (element) => element.textContent)).toBe(
      'Showing the first 200 of 300 videos found by this search — see all, page by page.',
    );
    expect(await page.$eval('#videos-cap a', (element) => element.getAttribute('href'))).toBe(
      `/channels/${large.channel.channelId}#videos`,
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await saveScreenshot(page, 'channel-live-capped');
    await page.close();
  }, 90_000);

  it('refuses the live stream of a session that is not the visitor’s', async () => {
    const response = await fetch(`${channelUrl()}/live?session=${randomUUID()}`, { headers: { Accept: 'text/event-stream' } });
    expect(response.status).toBe(404);
    const unknown = await fetch(`${stack.api.url}/channels/UC${'x'.repeat(22)}`, { headers: { Accept: 'text/html' } });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('is not in the archive yet');
  });
});
