import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../core/accounts/createSession.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { fanOutChanges } from '../../core/watchlists/fanOut.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { accessibilityViolations, launchBrowser, openTab, overflowsWidth, saveScreenshot } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';

// Watching in a real browser: the Watch button on a channel's, a video's and a search's page (a link
// to sign in for an anonymous visitor, a select when there are several watchlists, "Watching" once
// watched), the /watchlists page (items, the private feed and its rotation, rename, remove, delete with
// confirmation), the feeds the pages link to, and forms refused without their CSRF token.

let db: TestDatabase;
let api: TestApi;
let browser: Browser;
const PASSWORD = 'correct horse battery staple';
const carol = { email: 'carol@example.org', password: PASSWORD };
const dave = { email: 'dave@example.org', password: PASSWORD };
const channel = channelIdFor('watch-lathes');
const video = videoIdFor('watch-lathe-1');
const otherVideo = videoIdFor('watch-lathe-2');

beforeAll(async () => {
  db = await createTestDatabase();
  // Webhooks to this machine are allowed, as on a home network (none is delivered here: no worker runs).
  api = await startTestApi(db.sql, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  browser = await launchBrowser();
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 10_000 } });
  await updateTier(db.sql, 'plus', { limits: { requestsPerMinute: 10_000 } });
  await Promise.all([
    createUser(db.sql, { email: carol.email, tier: 'plus', isAdmin: false, password: carol.password }),
    createUser(db.sql, { email: dave.email, tier: 'registered', isAdmin: false, password: dave.password }),
  ]);
  await addVideos(
    db.sql,
    channel,
    [
      { videoId: video, title: 'Restoring a lathe' },
      { videoId: otherVideo, title: 'The lathe runs again' },
    ],
    'Lathe Workshop',
  );
  await refreshSearchWords(db.sql);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await db?.drop();
});

const text = (page: Page) => page.$eval('main', (element) => element.textContent ?? '');
const submit = (page: Page, selector: string) => Promise.all([page.waitForNavigation({ timeout: 10_000 }), page.click(selector)]);

async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.type('#login-email', who.email);
  await page.type('#login-password', who.password);
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
}

const watchlistsOf = (email: string) =>
  db.sql<{ id: string; name: string; items: number }[]>`
    select w.id::text as id, w.name, (select count(*) from watchlist_items i where i.watchlist_id = w.id)::int as items
    from watchlists w join users u on u.id = w.owner_id where u.email = ${email} order by w.created_at`;

describe('watching in the browser', () => {
  it('signs in from a channel page, watches the channel, finds it on /watchlists, renames, rotates the feed, removes and deletes', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await page.goto(`${api.url}/channels/${channel}`);
    // Anonymous: a link to sign in that comes back here.
    await submit(page, '.watch a');
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, carol);
    expect(new URL(page.url()).pathname).toBe(`/channels/${channel}`);

    await submit(page, 'form[action="/watch"] button');
    expect(new URL(page.url()).pathname).toBe(`/channels/${channel}`);
    expect(await page.$eval('.watch', (element) => element.textContent)).toContain('Watching in My watchlist');
    expect(await page.$eval('.watch [role=status]', (element) => element.textContent)).toContain('My watchlist');
    expect(await watchlistsOf(carol.email)).toEqual([{ id: expect.any(String), name: 'My watchlist', items: 1 }]);
    // The notice is said once: a reload shows the state, not the notice.
    await page.reload();
    expect(await page.$('.watch [role=status]')).toBeNull();
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.goto(`${api.url}/watchlists`);
    expect(await page.$eval('h1', (element) => element.textContent)).toBe('Your watchlists');
    expect(await page.$eval('ul.watched a', (element) => [element.textContent, element.getAttribute('href')])).toEqual([
      'Lathe Workshop',
      `/channels/${channel}`,
    ]);
    const [watchlist] = await watchlistsOf(carol.email);
    const feedUrl = await page.$eval('.feed-url input', (element) => (element as HTMLInputElement).value);
    expect(feedUrl).toMatch(new RegExp(`^${api.url}/feeds/watchlists/${watchlist!.id}/[A-Za-z0-9_-]+\\.atom$`));
    expect(await page.$eval('link[rel=alternate][type="application/atom+xml"]', (element) => element.getAttribute('href'))).toBe(feedUrl);
    expect(await accessibilityViolations(page)).toEqual([]);

    // Rotate: a new URL, and the page says the old one stops working.
    expect(await text(page)).toContain('The old URL then stops working at once');
    await submit(page, `form[action="/watchlists/${watchlist!.id}/feed"] button`);
    const rotated = await page.$eval('.feed-url input', (element) => (element as HTMLInputElement).value);
    expect(rotated).not.toBe(feedUrl);
    expect(await page.$eval('[role=status]', (element) => element.textContent)).toContain('the old one no longer works');

    // Rename.
    await page.click('details.manage > summary');
    const nameField = `#watchlist-${watchlist!.id}-rename`;
    await page.$eval(nameField, (element) => ((element as HTMLInputElement).value = ''));
    await page.type(nameField, 'Lathes & metalwork');
    await submit(page, `form[action="/watchlists/${watchlist!.id}/rename"] button`);
    expect(await page.$eval('.watchlist h2', (element) => element.textContent)).toBe('Lathes & metalwork');

    // Remove the item.
    await submit(page, 'ul.watched form button');
    expect(await page.$('ul.watched')).toBeNull();
    expect(await page.$eval('[role=status]', (element) => element.textContent)).toContain('No longer watched');

    // Delete, after a page that asks.
    await page.click('details.manage > summary');
    await submit(page, `a[href="/watchlists/${watchlist!.id}/delete"]`);
    expect(await page.$eval('h1', (element) => element.textContent)).toBe('Delete “Lathes & metalwork”?');
    expect(await accessibilityViolations(page)).toEqual([]);
    await submit(page, `form[action="/watchlists/${watchlist!.id}/delete"] button`);
    expect(new URL(page.url()).pathname).toBe('/watchlists');
    expect(await text(page)).toContain('You have no watchlist yet');
    expect(await watchlistsOf(carol.email)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('watches a video into the watchlist chosen among several, says "Watching", and stops watching from the video page', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await page.goto(`${api.url}/login?next=%2Fwatchlists`);
    await signIn(page, carol);
    expect(new URL(page.url()).pathname).toBe('/watchlists');
    for (const name of ['Restorations', 'Workshop videos']) {
      await page.type('#new-watchlist', name);
      await submit(page, 'form.create button');
    }
    const [, second] = await watchlistsOf(carol.email);

    await page.goto(`${api.url}/videos/${video}`);
    const options = await page.$$eval('.watch select option', (elements) => elements.map((element) => element.textContent));
    expect(options.sort()).toEqual(['Restorations', 'Workshop videos']);
    await page.select('.watch select', second!.id);
    await submit(page, 'form[action="/watch"] button');
    expect(new URL(page.url()).pathname).toBe(`/videos/${video}`);
    expect(await page.$eval('.watch', (element) => element.textContent)).toContain('Watching in Workshop videos');
    expect(await watchlistsOf(carol.email)).toEqual([
      expect.objectContaining({ name: 'Restorations', items: 0 }),
      expect.objectContaining({ name: 'Workshop videos', items: 1 }),
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.setViewport({ width: 320, height: 800 });
    expect(await overflowsWidth(page)).toBe(false);
    await page.setViewport({ width: 1280, height: 900 });

    await submit(page, '.watch form.watching button');
    expect(new URL(page.url()).pathname).toBe(`/videos/${video}`);
    expect(await page.$eval('.watch [role=status]', (element) => element.textContent)).toContain('No longer watched');
    expect(await page.$('.watch form.watching')).toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('watches a full-text search ("Watch this query") and shows it as a search on /watchlists', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await page.goto(`${api.url}/login?next=${encodeURIComponent('/search?q=lathe&in=videos&status=live')}`);
    await signIn(page, carol);
    expect(await page.$eval('.watch form[action="/watch"] button', (element) => element.textContent)).toBe('Watch this query');
    expect(await page.$eval('link[rel=alternate][type="application/atom+xml"]', (element) => element.getAttribute('href'))).toBe(
      '/feeds/deletions.atom',
    );
    // Several watchlists: the form has a select.
    await submit(page, 'form[action="/watch"] button');
    expect(await page.$eval('.watch', (element) => element.textContent)).toContain('Watching in');
    const [saved] = await db.sql<{ query: unknown }[]>`select query from saved_queries`;
    expect(saved!.query).toEqual({ q: 'lathe', in: 'videos', status: 'live' });
    await page.goto(`${api.url}/watchlists`);
    expect(await page.$$eval('ul.watched a', (elements) => elements.map((element) => element.getAttribute('href')))).toContainEqual(
      '/search?q=lathe&in=videos&status=live',
    );
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows watchlists with content that fit a phone: screenshots at 1280 and 390 px', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await page.goto(`${api.url}/login?next=${encodeURIComponent(`/channels/${channel}`)}`);
    await signIn(page, carol);
    const workshop = (await watchlistsOf(carol.email)).find((watchlist) => watchlist.name === 'Workshop videos')!;
    for (const path of [`/channels/${channel}`, `/videos/${video}`, `/videos/${otherVideo}`]) {
      await page.goto(`${api.url}${path}`);
      await page.select('.watch select', workshop.id);
      await submit(page, 'form[action="/watch"] button');
    }
    await saveScreenshot(page, 'video-watching-1280');
    // A confirmed deletion as check_status writes it, fanned out as fan_out_changes does: it is the watchlist's news.
    await db.sql`update videos set status = 'deleted', status_reason = 'terms_of_service', status_source = 'data_api',
      status_evidence = 'videos.list: no item | then: player: This video has been removed for violating the Terms of Service'
      where video_id = ${otherVideo}`;
    await fanOutChanges(db.sql);
    await page.goto(`${api.url}/watchlists`);
    expect(await page.$$eval(`#watchlist-${workshop.id} ul.watched li`, (items) => items.length)).toBe(4);
    expect(
      await page.$eval(`#watchlist-${workshop.id} ol.changes li`, (item) => [
        item.textContent,
        item.querySelector('a')!.getAttribute('href'),
      ]),
    ).toEqual([
      expect.stringContaining('Deleted: The lathe runs again — removed for breaking the terms of service'),
      `/videos/${otherVideo}`,
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'watchlists-1280');
    for (const width of [320, 390]) {
      await page.setViewport({ width, height: 844 });
      expect({ width, overflows: await overflowsWidth(page) }).toEqual({ width, overflows: false });
    }
    await saveScreenshot(page, 'watchlists-390');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('adds a webhook (its secret shown once), sends a test event to its delivery log, shows why it was disabled, enables and deletes it', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await page.goto(`${api.url}/login?next=%2Fwatchlists`);
    await signIn(page, carol);
    const workshop = (await watchlistsOf(carol.email)).find((watchlist) => watchlist.name === 'Workshop videos')!;
    const section = `#watchlist-${workshop.id}`;
    await page.type(`${section} input[name=url]`, 'http://127.0.0.1:9/afterimage-hook');
    await submit(page, `${section} form.add-webhook button`);
    const [endpoint] = await db.sql<{ id: string }[]>`select id::text as id from webhook_endpoints where watchlist_id = ${workshop.id}`;
    const secret = await page.$eval(`#secret-${endpoint!.id}`, (element) => element.textContent);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(await page.$eval(`#webhook-${endpoint!.id} .webhook-url`, (element) => element.textContent)).toContain(
      'http://127.0.0.1:9/afterimage-hook',
    );
    await page.reload();
    expect(await page.$(`#secret-${endpoint!.id}`)).toBeNull();
    expect(await page.content()).not.toContain(secret!);

    await submit(page, `form[action="/watchlists/${workshop.id}/webhooks/${endpoint!.id}/test"] button`);
    expect(await page.$eval('[role=status]', (element) => element.textContent)).toContain('Test event queued');
    await page.click(`#webhook-${endpoint!.id} details.delivery-log > summary`);
    expect(await page.$eval(`#webhook-${endpoint!.id} table.deliveries tbody`, (element) => element.textContent)).toContain('webhook.test');

    // Disabled by the deliveries (as three days of failures leave it): the page says why, and enables it again.
    await db.sql`update webhook_endpoints set disabled_at = now(), disabled_reason = 'it failed for 3 days (last: 503 Service Unavailable)'
      where id = ${endpoint!.id}`;
    await page.reload();
    expect(await page.$eval(`#webhook-${endpoint!.id} .error-box`, (element) => element.textContent)).toContain(
      'it failed for 3 days (last: 503 Service Unavailable)',
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await saveScreenshot(page, 'watchlists-webhook-1280');
    await submit(page, `form[action="/watchlists/${workshop.id}/webhooks/${endpoint!.id}/enable"] button`);
    expect(await page.$eval(`#webhook-${endpoint!.id}`, (element) => element.getAttribute('data-status'))).toBe('active');

    await submit(page, `form[action="/watchlists/${workshop.id}/webhooks/${endpoint!.id}/delete"] button`);
    expect(await page.$(`#webhook-${endpoint!.id}`)).toBeNull();
    expect(await db.sql`select 1 from webhook_endpoints where id = ${endpoint!.id}`).toHaveLength(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('links the feeds of deletions: the site-wide one from home and search, the channel\u2019s from its page', async () => {
    const { page } = await openTab(browser, api.url);
    const alternate = () =>
      page.$$eval('link[rel=alternate][type="application/atom+xml"]', (elements) =>
        elements.map((element) => element.getAttribute('href')),
      );
    await page.goto(`${api.url}/`);
    expect(await alternate()).toEqual(['/feeds/deletions.atom']);
    await page.goto(`${api.url}/search?q=lathe`);
    expect(await alternate()).toEqual(['/feeds/deletions.atom']);
    await page.goto(`${api.url}/channels/${channel}`);
    expect(await alternate()).toEqual([`/channels/${channel}/deletions.atom`]);
    expect(await page.$eval(`main a[href="/channels/${channel}/deletions.atom"]`, (element) => element.textContent)).toContain('Feed');
    await page.close();
  });

  it('sends an anonymous visitor of /watchlists to sign in; a tier without watchlists gets a page saying so', async () => {
    const anonymous = await fetch(`${api.url}/watchlists`, { headers: { Accept: 'text/html' }, redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/login?next=%2Fwatchlists');

    await updateTier(db.sql, 'registered', { features: { watchlists: false } });
    try {
      const [user] = await db.sql<{ id: string }[]>`select id from users where email = ${dave.email}`;
      const { token } = await createSession(db.sql, user!.id);
      const cookie = `afterimage_session=${token}`;
      const refused = await fetch(`${api.url}/watchlists`, { headers: { Accept: 'text/html', Cookie: cookie } });
      expect(refused.status).toBe(403);
      const page = await refused.text();
      expect(page).toContain('Watchlists is not part of the Registered tier.');
      expect(page).toContain('Available in the');
      // No Watch button for them on a channel page.
      const channelPage = await (
        await fetch(`${api.url}/channels/${channel}`, { headers: { Accept: 'text/html', Cookie: cookie } })
      ).text();
      expect(channelPage).not.toContain('class="watch"');
    } finally {
      await updateTier(db.sql, 'registered', { features: { watchlists: true } });
    }
  });

  it('refuses every watchlist form posted without its CSRF token (403 page), and changes nothing', async () => {
    const [user] = await db.sql<{ id: string }[]>`select id from users where email = ${carol.email}`;
    const { token } = await createSession(db.sql, user!.id);
    const [watchlist] = await watchlistsOf(carol.email);
    const before = await watchlistsOf(carol.email);
    const forms: Array<[string, string]> = [
      ['/watch', `kind=channel&channelId=${channel}`],
      ['/watchlists', 'name=Forged'],
      [`/watchlists/${watchlist!.id}/rename`, 'name=Forged'],
      [`/watchlists/${watchlist!.id}/feed`, ''],
      [`/watchlists/${watchlist!.id}/delete`, ''],
      [`/watchlists/${watchlist!.id}/webhooks`, 'url=http%3A%2F%2F127.0.0.1%3A9%2Fforged'],
    ];
    for (const [action, body] of forms) {
      const forged = await fetch(`${api.url}${action}`, {
        method: 'POST',
        headers: { Cookie: `afterimage_session=${token}`, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
        body,
        redirect: 'manual',
      });
      expect({ action, status: forged.status }).toEqual({ action, status: 403 });
      expect(await forged.text()).toContain('security token is missing');
    }
    expect(await watchlistsOf(carol.email)).toEqual(before);
    expect(await db.sql`select 1 from webhook_endpoints where url like '%forged'`).toHaveLength(0);
  });
});
