import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { corpusChannel, idOf, storeCorpus } from '../fts/corpus.ts';
import { createKeyedUser, createSignedInUser, startTestApi, type TestApi } from '../support/api.ts';
import {
  accessibilityViolations,
  launchBrowser,
  navigateSettled,
  openTab,
  overflowsWidth,
  saveScreenshot,
  signedInTab,
  visitSettled,
} from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { awaitFreshWindow } from '../support/http-helpers.ts';
import { addTrack, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let api: TestApi;
let browser: Browser;
let user: Awaited<ReturnType<typeof createSignedInUser>>;
const crawled = generateChannel(3);

beforeAll(async () => {
  db = await createTestDatabase();
  await storeCorpus(db.sql);
  await db.sql`insert into videos (video_id, channel_id, title, description) values
    (${idOf('markup')}, ${corpusChannel}, ${'<script>alert(1)</script> Lathe & co'}, ${'A lathe & <b>bold</b> claims'})`;
  await addTrack(db.sql, {
    videoId: idOf('python-tutorial'),
    language: 'en',
    kind: 'manual',
    text: vttOf([
      'Welcome to the course.',
      'First we install the interpreter.',
      'Then the interpreter runs our code.',
      'The interpreter again.',
      'And once more the interpreter.',
    ]),
  });
  await db.sql.begin((tx) => refreshTranscript(tx, idOf('python-tutorial')));
  await refreshSearchWords(db.sql);
  await updateTier(db.sql, 'pro', { limits: { ftsQueriesPerMinute: 1_000, requestsPerMinute: 100_000 } });
  api = await startTestApi(db.sql, {}, undefined, { sources: [fakeSource({ name: 'youtube_api', ...crawled })] });
  user = await createSignedInUser(db.sql);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await db?.drop();
});

/** A tab of a signed-in Pro user. */
const userTab = (width = 1280) => signedInTab(browser, api.url, user.session, width);

const resultTitles = (page: Page) => page.$$eval('ol.results > li h3', (titles) => titles.map((title) => title.textContent));
const go = async (page: Page, path: string) => {
  const response = await visitSettled(page, `${api.url}${path}`);
  return response!.status();
};

describe('the search page', () => {
  it("words a status as the channel page, the video page and the JSON's reasonText do", async () => {
    const videoId = idOf('bridge-phrase');
    const { page, problems } = await userTab();
    const { key } = await createKeyedUser(db.sql);
    const answer = await (await fetch(`${api.url}/api/fts?q=bridge&status=deleted`, { headers: { 'X-API-Key': key } })).json();
    const { reasonText } = answer.data.videos.find((video: { videoId: string }) => video.videoId === videoId);
    expect(reasonText).toBe('removed by the uploader');
    await go(page, '/search?q=bridge&status=deleted');
    const inSearch = await page.$eval(`ol.results > li:has(a[href="/videos/${videoId}"]) .badge`, (badge) => badge.textContent);
    await go(page, `/videos/${videoId}`);
    const onVideo = await page.$eval('.facts .badge', (badge) => badge.textContent);
    await go(page, `/channels/${corpusChannel}?show=deleted`);
    const onChannel = await page.$eval(`#videos-list li[data-video-id="${videoId}"] .badge`, (badge) => badge.textContent);
    expect(new Set([inSearch, onVideo, onChannel])).toEqual(new Set([`Deleted: ${reasonText}`]));
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows results with <mark> highlights, escaped markup and a status badge on each', async () => {
    const { page, problems } = await userTab();
    await page.goto(`${api.url}/`);
    await page.type('#home-q', 'lathe');
    await navigateSettled(page, page.keyboard.press('Enter'));
    expect(new URL(page.url()).pathname).toBe('/search');
    expect(await page.$eval('#results-heading', (heading) => heading.textContent)).toBe('4 videos');
    const marks = await page.$$eval('ol.results mark', (elements) => elements.map((mark) => mark.textContent!.toLowerCase()));
    expect(marks.length).toBeGreaterThanOrEqual(4);
    expect(new Set(marks)).toEqual(new Set(['lathe']));
    // The title with markup is shown as text: no element of it reaches the page.
    expect(await resultTitles(page)).toContain('<script>alert(1)</script> Lathe & co');
    expect(
      await page.$$eval('script', (scripts) =>
        scripts.every((script) => script.getAttribute('src') || script.type === 'application/ld+json'),
      ),
    ).toBe(true);
    expect(await page.$$('ol.results b')).toHaveLength(0);
    expect(await page.$$eval('ol.results > li', (cards) => cards.every((card) => card.querySelector('.badge') !== null))).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'search');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('filters to deleted videos with the reason, and a re-upload names where it lives on', async () => {
    const { page, problems } = await userTab();
    await go(page, '/search?q=bridge+OR+cats');
    expect((await resultTitles(page)).length).toBe(4);
    await page.select('#search-status', 'deleted');
    await navigateSettled(page, page.click('fieldset.filters button'));
    expect(new URL(page.url()).searchParams.get('status')).toBe('deleted');
    expect((await resultTitles(page)).sort()).toEqual(['Cats sleeping', 'The bridge collapsed into the river']);
    const badges = await page.$$eval('ol.results .badge', (elements) => elements.map((badge) => badge.textContent));
    expect(badges).toContain('Deleted: removed by the uploader');
    expect(badges).toContain('Re-uploaded: removed by the uploader');
    expect(await page.$$eval('ol.results a.fact', (links) => links.map((link) => link.getAttribute('href')))).toContain(
      `/videos/${idOf('or-dogs')}`,
    );
    // Each gone video says when it went.
    expect(
      await page.$$eval('ol.results > li', (cards) => cards.every((card) => /deleted \d{4}-\d{2}-\d{2}/.test(card.textContent ?? ''))),
    ).toBe(true);
    expect(await page.$eval('#search-status', (select) => (select as HTMLSelectElement).value)).toBe('deleted');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('pages through results, keeping the filters and the order, and a result opens its video page', async () => {
    const { page, problems } = await userTab();
    await go(page, '/search?q=paging&sort=date-asc');
    expect(await page.$eval('#results-heading', (heading) => heading.textContent)).toBe('23 videos');
    expect(await resultTitles(page)).toHaveLength(20);
    await navigateSettled(page, page.click('nav.pager a[rel=next]'));
    const url = new URL(page.url());
    expect([url.searchParams.get('page'), url.searchParams.get('sort')]).toEqual(['2', 'date-asc']);
    expect(await resultTitles(page)).toHaveLength(3);
    expect(await page.$eval('nav.pager', (pager) => pager.textContent)).toContain('Page 2 of 2');
    const first = await page.$eval('ol.results > li h3 a', (link) => link.getAttribute('href'));
    await Promise.all([page.waitForNavigation(), page.click('ol.results > li h3 a')]);
    expect(new URL(page.url()).pathname).toBe(first);
    expect(first).toMatch(/^\/videos\/[A-Za-z0-9_-]{11}$/);
    // The video page is another helper's: until it lands, that navigation is a 404 page.
    expect(problems.filter((problem) => !problem.includes('404'))).toEqual([]);
    await page.close();
  });

  it('in=subtitles shows the matching lines, each a link to its moment of the video page', async () => {
    const { page, problems } = await userTab(390);
    await go(page, '/search?q=interpreter&in=subtitles');
    const cues = await page.$$eval('ul.cues a', (links) => links.map((link) => [link.getAttribute('href'), link.textContent]));
    expect(cues).toEqual([
      [`/videos/${idOf('python-tutorial')}?t=3#current-cue`, '0:03'],
      [`/videos/${idOf('python-tutorial')}?t=6#current-cue`, '0:06'],
      [`/videos/${idOf('python-tutorial')}?t=9#current-cue`, '0:09'],
    ]);
    expect(await page.$$eval('ul.cues mark', (marks) => marks.map((mark) => mark.textContent))).toEqual([
      'interpreter',
      'interpreter',
      'interpreter',
    ]);
    expect(await page.$eval('ul.cues', (list) => list.textContent)).toContain('and 1 more');
    expect(await overflowsWidth(page)).toBe(false);
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'search-subtitles-390');
    // A hit opens the video page at its line: marked, and scrolled into view (by its fragment, without script).
    await page.setJavaScriptEnabled(false);
    await navigateSettled(page, page.click('ul.cues li:nth-child(3) a'));
    expect(await page.$$eval('#transcript-list li.current', (items) => items.map((item) => item.textContent))).toEqual([
      '0:09 The interpreter again.',
    ]);
    expect(await page.$eval('li.current', (item) => item.id)).toBe('current-cue');
    const inView = await page.$eval('li.current', (item) => {
      const box = item.getBoundingClientRect();
      const list = item.closest('ol')!.getBoundingClientRect();
      return box.top >= Math.max(0, list.top) && box.bottom <= Math.min(window.innerHeight, list.bottom);
    });
    expect(inView).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('offers a corrected query when a misspelling finds nothing', async () => {
    const { page, problems } = await userTab();
    await go(page, '/search?q=pythn+tutoral&status=live');
    expect(await page.$eval('#results-heading', (heading) => heading.textContent)).toBe('Nothing found');
    const suggestion = await page.$eval('.did-you-mean a', (link) => ({ text: link.textContent, href: link.getAttribute('href') }));
    expect(suggestion).toEqual({ text: 'python tutorial', href: '/search?q=python+tutorial&status=live' });
    await navigateSettled(page, page.click('.did-you-mean a'));
    expect(await resultTitles(page)).toEqual(['Python tutorial for beginners']);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows invalid input as a 400 page naming the field', async () => {
    const { page, problems } = await userTab();
    expect(await go(page, '/search?q=lathe&sort=loudest')).toBe(400);
    expect(await page.$eval('.error-box', (box) => box.textContent)).toMatch(/^Sort: expected one of relevance/);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems.filter((problem) => !problem.includes('400'))).toEqual([]);
    await page.close();
  });
});

describe('the search box takes what POST /api/search takes', () => {
  it('a channel handle starts that channel search, charged as one, and goes to its page with the session', async () => {
    const answer = await fetch(`${api.url}/search?q=${encodeURIComponent(crawled.channel.handle)}`, {
      headers: { Accept: 'text/html', Cookie: user.cookie },
      redirect: 'manual',
    });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!, api.url);
    expect(location.pathname).toBe(`/channels/${crawled.channel.channelId}`);
    const sessionId = location.searchParams.get('session');
    const [session] = await db.sql`select channel_id from search_sessions where id = ${sessionId}::uuid`;
    expect(session).toMatchObject({ channel_id: crawled.channel.channelId });
    const [used] = await db.sql<
      { used: number }[]
    >`select coalesce(sum(used), 0)::int as used from usage_counters where limit_name = 'channelSearchesPerHour'`;
    expect(used!.used).toBe(1);
  });

  it('a video URL, or the id of a stored video, goes to the video page; an 11-letter word is searched for', async () => {
    const headers = { Accept: 'text/html', Cookie: user.cookie };
    const fromUrl = await fetch(`${api.url}/search?q=${encodeURIComponent(`https://youtu.be/${idOf('lathe-title')}`)}`, {
      headers,
      redirect: 'manual',
    });
    expect([fromUrl.status, fromUrl.headers.get('location')]).toEqual([303, `/videos/${idOf('lathe-title')}`]);
    const fromId = await fetch(`${api.url}/search?q=${idOf('cafe-plain')}`, { headers, redirect: 'manual' });
    expect([fromId.status, fromId.headers.get('location')]).toEqual([303, `/videos/${idOf('cafe-plain')}`]);
    const word = await fetch(`${api.url}/search?q=programming`, { headers, redirect: 'manual' });
    expect(word.status).toBe(200);
    expect(await word.text()).toContain('Python tutorial for beginners');
  });

  it('an anonymous visitor gets the anonymous tier: past its full-text queries a 429 page says when to come back', async () => {
    await updateTier(db.sql, 'anonymous', { limits: { ftsQueriesPerMinute: 2 } });
    try {
      // Four pages in a browser take seconds on a loaded machine: all in one minute's bucket, or the sliding
      // window's estimate rounds the previous bucket's two queries down and lets the third through.
      await awaitFreshWindow(db.sql, 60, 15);
      const { page, problems } = await openTab(browser, api.url, 390);
      expect(await go(page, '/search?q=lathe')).toBe(200);
      expect(await go(page, '/search?q=cats')).toBe(200);
      // Another page and order of the same words is not a new query.
      expect(await go(page, '/search?q=cats&page=2&sort=date-desc')).toBe(200);
      expect(await go(page, '/search?q=dogs&in=subtitles')).toBe(429);
      expect(await page.$eval('h1', (heading) => heading.textContent)).toBe('Too many requests');
      expect(await page.$eval('.error-box', (box) => box.textContent)).toMatch(/Try again in \d+ (s|min)\b/);
      // The words stay in the search box, to send again; nobody is told to sign in where nobody can sign up.
      expect(await page.$eval('#search-again', (input) => (input as HTMLInputElement).value)).toBe('dogs');
      expect(await page.$eval('form:has(#search-again) input[name=in]', (input) => (input as HTMLInputElement).value)).toBe('subtitles');
      expect(await page.$eval('main', (main) => main.textContent)).not.toMatch(/sign in/i);
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(await overflowsWidth(page)).toBe(false);
      await saveScreenshot(page, 'search-429-390');
      expect(problems.filter((problem) => !problem.includes('429'))).toEqual([]);
      await page.close();
    } finally {
      await updateTier(db.sql, 'anonymous', { limits: { ftsQueriesPerMinute: 5 } });
    }
    // Where anyone may sign up, the 429 page says accounts have higher limits.
    const open = await startTestApi(db.sql, { REGISTRATION: 'open' });
    try {
      await updateTier(db.sql, 'anonymous', { limits: { ftsQueriesPerMinute: 0 } });
      const refused = await fetch(`${open.url}/search?q=otters`, { headers: { Accept: 'text/html' } });
      expect(refused.status).toBe(429);
      const html = await refused.text();
      expect(html).toContain('<a href="/register">create one</a>');
      expect(html).toContain('value="otters"');
    } finally {
      await updateTier(db.sql, 'anonymous', { limits: { ftsQueriesPerMinute: 5 } });
      await open.close();
    }
  });

  it('an anonymous visitor pages through ten pages of one query and changes its order within a minute: one query counted', async () => {
    await db.sql`delete from usage_counters where limit_name = 'ftsQueriesPerMinute'`;
    const { page, problems } = await openTab(browser, api.url);
    for (let number = 1; number <= 10; number++) expect(await go(page, `/search?q=the&pageSize=1&page=${number}`)).toBe(200);
    expect(await go(page, '/search?q=the&pageSize=1&sort=date-asc&status=live')).toBe(200);
    const [counted] = await db.sql<
      { used: number }[]
    >`select sum(used)::int as used from usage_counters where limit_name = 'ftsQueriesPerMinute'`;
    expect(counted!.used).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });
});
