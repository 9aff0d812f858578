import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../core/accounts/createSession.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { runGenerationJob } from '../../core/generations/lifecycle.ts';
import { createLogger } from '../../core/log.ts';
import { createExtractiveGenerator } from '../../core/summaries/offline/createExtractiveGenerator.ts';
import { requestSummary, summaryWork } from '../../core/summaries/summaryGeneration.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { accessibilityViolations, launchBrowser, navigateSettled, openTab, saveScreenshot, visitSettled } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

// Every page as a phone shows it (320 and 390 px: nothing scrolls sideways, the first search result on
// the first screen) and in the dark theme (prefers-color-scheme: dark, every text readable), filled with
// what stretches a narrow screen: long status badges, words and URLs with no place to break, wide tables.

let db: TestDatabase;
let api: TestApi;
let browser: Browser;
let session: string;

const channel = channelIdFor('phone-werkstatt');
const v = {
  banned: videoIdFor('phone-banned'),
  moved: videoIdFor('phone-moved'),
  copy: videoIdFor('phone-copy'),
};
const LONG_WORD = 'Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherungslathe';
const LONG_URL = `https://example.org/${'very-long-path-segment-'.repeat(8)}lathe?tracking=${'x'.repeat(60)}`;
const LINES = [
  `The ${LONG_WORD} is where the lathe story begins.`,
  `Every part of the lathe is listed at ${LONG_URL}.`,
  'The motor of the lathe still runs, but its belt is cracked and must go.',
  'New bearings go into the headstock, pressed in with a vice.',
  'The restored lathe runs quietly, and the first bowl comes out smooth.',
];

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 100_000 } });
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, ftsQueriesPerMinute: 100_000 } });
  api = await startTestApi(db.sql, { REGISTRATION: 'open' });
  const admin = await createUser(db.sql, { email: `${'a-very-long-mailbox-name'.repeat(2)}@example.org`, tier: 'pro', isAdmin: true });
  session = (await createSession(db.sql, admin.id)).token;
  await addVideos(
    db.sql,
    channel,
    [
      { videoId: v.banned, title: `${LONG_WORD}: restoring a 1950s lathe` },
      { videoId: v.moved, title: 'The lathe, moved to another channel' },
      { videoId: v.copy, title: 'The lathe, uploaded again' },
      ...Array.from({ length: 6 }, (_, index) => ({ videoId: videoIdFor(`phone-more-${index}`), title: `Lathe part ${index + 1}` })),
    ],
    `Werkstatt ${LONG_WORD}`,
  );
  await db.sql`update channels set handle = '@werkstattgeschichten_lathe', aliases = ${[LONG_WORD]} where channel_id = ${channel}`;
  await db.sql`update videos set description = ${`Parts: ${LONG_URL}`}, upload_date = '2021-04-05', duration_seconds = 190, view_count = 1234567
    where channel_id = ${channel}`;
  // The longest badge there is, with evidence that is one unbroken URL; a re-upload's link.
  await db.sql`update videos set status = 'deleted', status_reason = 'terms_of_service', status_source = 'watch_page',
    status_evidence = ${`This video has been removed for violating YouTube's Terms of Service (${LONG_URL})`} where video_id = ${v.banned}`;
  await db.sql`update videos set status = 're-uploaded', status_reason = 'removed_by_uploader', reuploaded_as = ${v.copy}
    where video_id = ${v.moved}`;
  await addTrack(db.sql, { videoId: v.banned, language: 'en', kind: 'manual', text: vttOf(LINES, 20) });
  await db.sql.begin((tx) => refreshTranscript(tx, v.banned));
  const request = await requestSummary(db.sql, { videoId: v.banned, ownerId: admin.id, private: false, charge: async () => undefined });
  if (request.outcome !== 'generating') throw new Error(`the summary was not requested: ${request.outcome}`);
  await runGenerationJob({ sql: db.sql, log: createLogger('silent') }, summaryWork(createExtractiveGenerator()), request.summary.id, {
    finalAttempt: true,
  });
  // A watchlist as long as they come: a long name, a channel, a video and a query with long words.
  const [watchlist] = await db.sql<{ id: string }[]>`
    insert into watchlists (owner_id, name) values (${admin.id}, ${`Lathes: ${LONG_WORD}`}) returning id::text as id`;
  const [query] = await db.sql<{ id: string }[]>`
    insert into saved_queries (query) values (${db.sql.json({ q: `${LONG_WORD} lathe`, in: 'subtitles' })}) returning id::text as id`;
  await db.sql`insert into watchlist_items (watchlist_id, kind, channel_id, video_id, saved_query_id) values
    (${watchlist!.id}, 'channel', ${channel}, null, null), (${watchlist!.id}, 'video', null, ${v.banned}, null),
    (${watchlist!.id}, 'query', null, null, ${query!.id})`;
  // A webhook with a long URL, disabled with a long reason, and a delivery with a long error in its log.
  const [endpoint] = await db.sql<{ id: string }[]>`
    insert into webhook_endpoints (watchlist_id, url, secret_sealed, disabled_at, disabled_reason)
    values (${watchlist!.id}, ${LONG_URL}, decode('00', 'hex'), now(), ${`it failed for 3 days (last: 503 from ${LONG_URL})`}) returning id::text as id`;
  const [delivery] = await db.sql<{ id: string }[]>`
    insert into webhook_deliveries (endpoint_id, message_id, event_type, state)
    values (${endpoint!.id}, 'msg_phone', 'webhook.test', 'failed') returning id::text as id`;
  await db.sql`insert into webhook_attempts (delivery_id, attempt, http_status, duration_ms, error)
    values (${delivery!.id}, 1, 503, 1234, ${`503 Service Unavailable: ${LONG_WORD}`})`;
  await refreshSearchWords(db.sql);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await db?.drop();
});

/** Every page of the site, as the administrator sees it (null: as an anonymous visitor), with the status it answers. */
const PAGES: Array<{ path: string; status: number; signedIn: boolean }> = [
  { path: '/', status: 200, signedIn: true },
  { path: '/search?q=lathe', status: 200, signedIn: true },
  { path: '/search?q=lathe&in=subtitles', status: 200, signedIn: true },
  { path: '/search', status: 200, signedIn: true },
  { path: `/channels/${channel}`, status: 200, signedIn: true },
  { path: `/videos/${v.banned}`, status: 200, signedIn: true },
  { path: `/videos/${v.moved}`, status: 200, signedIn: true },
  { path: '/summaries', status: 200, signedIn: true },
  { path: `/summaries/${v.banned}`, status: 200, signedIn: true },
  { path: '/account', status: 200, signedIn: true },
  { path: '/watchlists', status: 200, signedIn: true },
  { path: '/admin/users', status: 200, signedIn: true },
  { path: '/admin/tiers', status: 200, signedIn: true },
  { path: '/no-such-page', status: 404, signedIn: true },
  { path: '/videos/not-an-id', status: 400, signedIn: true },
  { path: '/login', status: 200, signedIn: false },
  { path: '/register', status: 200, signedIn: false },
  { path: '/login/once/no-such-link', status: 200, signedIn: false },
  { path: '/admin/users', status: 403, signedIn: false },
];

async function visit(page: Page, { path, status }: (typeof PAGES)[number]): Promise<void> {
  const response = await visitSettled(page, `${api.url}${path}`);
  // A page seen before may be revalidated: its 304 is the same page from the browser's cache.
  const seen = response!.status() === 304 && status === 200 ? 200 : response!.status();
  expect({ path, status: seen }).toEqual({ path, status });
}

async function tabOf(width: number, signedIn: boolean) {
  const tab = await openTab(browser, api.url, width);
  await tab.page.setViewport({ width, height: 844 });
  // Tabs share the browser's cookies: an anonymous one drops the session another set.
  if (signedIn) await tab.page.setCookie({ name: 'afterimage_session', value: session, url: api.url });
  else await tab.page.deleteCookie({ name: 'afterimage_session', url: api.url });
  return tab;
}

/** What sticks out past the right edge: the document's width, and elements not inside a box that scrolls or clips them. */
const sideways = (page: Page) =>
  page.evaluate(() => {
    const clipped = (element: Element) => {
      for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflowX !== 'visible') return true;
      }
      return false;
    };
    const wide = [...document.body.querySelectorAll('*')]
      .filter((element) => {
        const box = element.getBoundingClientRect();
        return box.width > 0 && (box.right > innerWidth + 0.5 || box.width > innerWidth) && !clipped(element);
      })
      .map(
        (element) =>
          `${element.tagName.toLowerCase()}.${[...element.classList].join('.')} (${Math.round(element.getBoundingClientRect().right)} px)`,
      );
    return { scrollWidth: document.documentElement.scrollWidth, wide };
  });

describe('every page on a phone', () => {
  for (const width of [320, 390]) {
    it(`nothing scrolls sideways at ${width} px`, async () => {
      for (const signedIn of [true, false]) {
        const { page, problems } = await tabOf(width, signedIn);
        for (const entry of PAGES.filter((candidate) => candidate.signedIn === signedIn)) {
          await visit(page, entry);
          expect({ path: entry.path, ...(await sideways(page)) }).toEqual({ path: entry.path, scrollWidth: width, wide: [] });
        }
        expect(problems.filter((problem) => !/\b(400|403|404)\b/.test(problem))).toEqual([]);
        await page.close();
      }
    }, 120_000);
  }

  it('shows the first search result on the first screen at 390 px, with the filters folded and one search box', async () => {
    const { page } = await tabOf(390, true);
    await visit(page, PAGES[1]!);
    const firstResultTop = await page.$eval('ol.results > li', (card) => card.getBoundingClientRect().top);
    expect(firstResultTop).toBeLessThan(844 - 100);
    expect(await page.$$('input[type=search]')).toHaveLength(1);
    expect(await page.$eval('details.fold', (details) => (details as HTMLDetailsElement).open)).toBe(false);
    expect(await page.$eval('#search-status', (select) => select.checkVisibility())).toBe(false);
    await saveScreenshot(page, 'search-phone-390');
    // Unfolded, the filters work as before.
    await page.click('details.fold > summary');
    await page.select('#search-status', 'deleted');
    await navigateSettled(page, page.click('fieldset.filters button'));
    expect(await page.$$eval('ol.results .badge', (badges) => badges.map((badge) => badge.textContent))).toEqual(
      expect.arrayContaining(['Deleted: removed for breaking the terms of service']),
    );
    await page.close();
  });

  it('shows the filters unfolded on a desktop, without JavaScript', async () => {
    const { page } = await tabOf(1280, true);
    await page.setJavaScriptEnabled(false);
    await visit(page, PAGES[1]!);
    expect(await page.$eval('#search-status', (select) => select.checkVisibility())).toBe(true);
    expect(await page.$eval('details.fold > summary', (summary) => summary.checkVisibility())).toBe(false);
    await page.close();
  });
});

describe('every page in the dark', () => {
  it('follows prefers-color-scheme: dark, every text with enough contrast', async () => {
    for (const signedIn of [true, false]) {
      // Colours do not change with the width: the phone's layout is checked.
      const { page } = await tabOf(390, signedIn);
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
      for (const entry of PAGES.filter((candidate) => candidate.signedIn === signedIn)) {
        await visit(page, entry);
        // A dark page: its background's luminance far below its text's.
        const [background, text] = await page.evaluate(() =>
          [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.documentElement).color].map((color) => {
            const [r, g, b] = color.match(/\d+/g)!.map(Number);
            return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
          }),
        );
        expect({ path: entry.path, dark: background! < 60 && text! > 180 }).toEqual({ path: entry.path, dark: true });
        expect({ path: entry.path, violations: await accessibilityViolations(page) }).toEqual({ path: entry.path, violations: [] });
      }
      if (signedIn) {
        await visit(page, PAGES[1]!);
        await saveScreenshot(page, 'search-dark-390');
      }
      await page.close();
    }
  }, 180_000);
});
