import { readdir, rm, writeFile } from 'node:fs/promises';
import { type IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { loadArchiveSubtitles } from '../../core/import/loadArchiveSubtitles.ts';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { createLogger } from '../../core/log.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { formToken } from '../../api/http/csrf.ts';
import { startWorker, type WorkerHandle } from '../../pipeline/worker.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
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

// A yt-dlp folder imported as `afterimage import` does (info.json, captions, a playable media file), shown
// in a real browser; the worker starts only when a test needs a generation to run.
let db: TestDatabase;
let api: TestApi;
let worker: WorkerHandle | undefined;
let browser: Browser;
let archive: ArchiveFixture;
let withMedia: string;
let withoutMedia: string;

/** A silent WAV (8 kHz, 8-bit mono): a media file Chromium plays, so the player has a timeline to seek. */
function silentWav(seconds: number): Buffer {
  const samples = 8000 * seconds;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples, 40);
  return Buffer.concat([header, Buffer.alloc(samples, 128)]);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 100_000 } });
  await updateTier(db.sql, 'registered', { limits: { requestsPerMinute: 100_000 } });
  archive = await createArchiveFixture({ videos: 4, mediaEvery: 2, subtitlesEvery: 1, flatOnly: 0, legacyChannel: false });
  withMedia = archive.videoIds[0]!;
  withoutMedia = archive.videoIds[1]!;
  // The fixture's media files are stand-in bytes: this one becomes a real (silent) recording.
  const mp4 = join(archive.dir, archive.channelTitle, archive.mediaFiles.get(withMedia)!);
  await rm(mp4);
  await writeFile(mp4.replace(/\.mp4$/, '.wav'), silentWav(30));
  // yt-dlp --write-thumbnail: a thumbnail beside the info.json of the first two videos.
  const folder = join(archive.dir, archive.channelTitle);
  const names = await readdir(folder);
  for (const videoId of archive.videoIds.slice(0, 2)) {
    const info = names.find((name) => name.endsWith(`[${videoId}].info.json`))!;
    const image = sharp({ create: { width: 480, height: 360, channels: 3, background: '#c0392b' } }).jpeg();
    await writeFile(join(folder, info.replace(/\.info\.json$/, '.jpg')), await image.toBuffer());
  }
  const scan = await scanArchive(archive.dir);
  const stored = await storeArchiveScan(db.sql, scan);
  await loadArchiveSubtitles(db.sql, stored.storedVideos, createLogger('silent'));
  api = await startTestApi(db.sql);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await api?.close();
  await archive?.cleanup();
  await db?.drop();
});

const videoUrl = (videoId: string, query = '') => `${api.url}/videos/${videoId}${query}`;

async function expectCleanPage(page: import('puppeteer-core').Page, problems: string[]) {
  expect(await accessibilityViolations(page)).toEqual([]);
  expect(problems).toEqual([]);
}

/** Every thumbnail of the page, as the browser loaded it. */
const thumbnails = (page: Page) =>
  page.$$eval('img.thumb', (images) =>
    images.map((image) => ({ src: image.getAttribute('src')!, loaded: image.complete && image.naturalWidth > 0, alt: image.alt })),
  );

describe('thumbnails', () => {
  it('are served from this origin on the video page, with links to YouTube and the Wayback Machine', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, api.url, width);
      await visitSettled(page, videoUrl(withoutMedia));
      const shown = await thumbnails(page);
      expect(shown).toEqual([{ src: `/api/videos/${withoutMedia}/thumbnail?w=640`, loaded: true, alt: '' }]);
      expect(await page.$eval('.elsewhere', (element) => [...element.querySelectorAll('a')].map((link) => link.href))).toEqual([
        `https://www.youtube.com/watch?v=${withoutMedia}`,
        `https://web.archive.org/web/*/https://www.youtube.com/watch?v=${withoutMedia}`,
      ]);
      expect(await overflowsWidth(page)).toBe(false);
      await expectCleanPage(page, problems);
      await saveScreenshot(page, `video-thumbnail-${width}`);
      await page.close();
    }
  });

  it('poster the player, and stand as a neutral block in channel lists and search results where none is kept', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, api.url, width);
      await visitSettled(page, videoUrl(withMedia));
      expect(await page.$eval('video#player', (element) => element.getAttribute('poster'))).toBe(
        `/api/videos/${withMedia}/thumbnail?w=640`,
      );
      await visitSettled(page, `${api.url}/channels/${archive.channelId}`);
      const shown = await thumbnails(page);
      expect(shown.map((image) => image.src).sort()).toEqual(
        archive.videoIds
          .slice(0, 2)
          .map((id) => `/api/videos/${id}/thumbnail?w=160`)
          .sort(),
      );
      expect(shown.every((image) => image.loaded)).toBe(true);
      expect(await page.$$eval('.card .thumb-none', (blocks) => blocks.map((block) => block.getAttribute('aria-hidden')))).toEqual(
        archive.videoIds.slice(2).map(() => 'true'),
      );
      expect(await overflowsWidth(page)).toBe(false);
      await expectCleanPage(page, problems);
      await saveScreenshot(page, `channel-thumbnails-${width}`);
      // Search results show them the same way.
      await visitSettled(page, `${api.url}/search?q=part`);
      const results = await thumbnails(page);
      expect(results).toHaveLength(2);
      expect(results.every((image) => image.loaded && image.src.startsWith('/api/videos/'))).toBe(true);
      expect(await page.$$('ol.results .thumb-none')).toHaveLength(archive.videoIds.length - 2);
      expect(await overflowsWidth(page)).toBe(false);
      await expectCleanPage(page, problems);
      await saveScreenshot(page, `search-thumbnails-${width}`);
      await page.close();
    }
  });
});

describe('the video page', () => {
  it('shows the metadata, the status history, the player and the transcript, clean at desktop and phone widths', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, api.url, width);
      await visitSettled(page, videoUrl(withMedia));
      expect(await page.$eval('h1', (element) => element.textContent)).toMatch(/\(part 1\)$/);
      expect(await page.$eval('.facts a[href^="/channels/"]', (element) => element.textContent)).toBe(archive.channelTitle);
      expect(await page.$$eval('.status-history li', (items) => items.length)).toBeGreaterThan(0);
      expect(await page.$eval('video#player', (element) => (element as HTMLVideoElement).src)).toBe(`${api.url}/videos/${withMedia}/media`);
      expect(await page.$$eval('#transcript-list li', (items) => items.length)).toBe(2);
      expect(await overflowsWidth(page)).toBe(false);
      await expectCleanPage(page, problems);
      await saveScreenshot(page, `video-${width}`);
      await page.close();
    }
  });

  it('seeks the player when a transcript timestamp is clicked, and starts at ?t= without script', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await visitSettled(page, videoUrl(withMedia));
    await page.waitForFunction(() => (document.querySelector('video#player') as HTMLVideoElement).readyState >= 1);
    const link = await page.$('#transcript-list li:nth-child(2) a');
    expect(await link!.evaluate((element) => element.getAttribute('href'))).toBe('?t=3#player');
    await link!.click();
    const time = await page.$eval('video#player', (element) => (element as HTMLVideoElement).currentTime);
    expect(time).toBeGreaterThanOrEqual(3);
    expect(time).toBeLessThan(5);
    expect(new URL(page.url()).search).toBe('');
    // The link a browser without script follows: the player's source starts at that second.
    await visitSettled(page, videoUrl(withMedia, '?t=3'));
    expect(await page.$eval('video#player', (element) => (element as HTMLVideoElement).src)).toBe(
      `${api.url}/videos/${withMedia}/media#t=3`,
    );
    await page.waitForFunction(() => (document.querySelector('video#player') as HTMLVideoElement).currentTime === 3);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('links the description: chapter times to their moment, URLs as external links', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await visitSettled(page, videoUrl(withoutMedia));
    await page.click('details.description > summary');
    const links = await page.$$eval('details.description a', (anchors) =>
      anchors.map((anchor) => [anchor.textContent, anchor.getAttribute('href'), anchor.getAttribute('rel')]),
    );
    expect(links).toEqual([
      ['0:00', '?t=0#player', null],
      ['1:00', '?t=60#player', null],
      ['https://example.org/support', 'https://example.org/support', 'nofollow noopener ugc'],
    ]);
    expect(await page.$eval('details.description p', (text) => text.textContent)).toContain('1:00 The work\n');
    await navigateSettled(page, page.click('details.description a[href="?t=60#player"]'));
    expect(new URL(page.url()).searchParams.get('t')).toBe('60');
    // At 60 s the transcript's last line started before: it is the one marked.
    expect(await page.$$eval('#transcript-list li.current', (items) => items.length)).toBe(1);
    for (const width of [1280, 390]) {
      await page.setViewport({ width, height: 900 });
      await visitSettled(page, videoUrl(withMedia, '?t=3#current-cue'));
      await page.click('details.description > summary');
      await saveScreenshot(page, `video-marked-line-${width}`);
    }
    await expectCleanPage(page, problems);
    await page.close();
  });

  it('serves the media with byte ranges, as the API route does', async () => {
    const response = await fetch(`${api.url}/videos/${withMedia}/media`, { headers: { Range: 'bytes=0-43' } });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('content-range')).toBe(`bytes 0-43/${44 + 8000 * 30}`);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('RIFF');
  });

  it('filters the transcript as one types, and with tq= on the server without script', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await visitSettled(page, videoUrl(withMedia));
    await page.focus('#tq');
    await page.keyboard.type('WORKSHOP');
    await page.waitForFunction(() => document.querySelectorAll('#transcript-list li:not([hidden])').length === 1);
    expect(await page.$eval('#transcript-list li:not([hidden]) span', (element) => element.textContent)).toBe(
      'Welcome back to the workshop.',
    );
    await page.waitForFunction(() => document.getElementById('transcript-count')!.textContent!.startsWith('1 of 2 lines'));
    expect(problems).toEqual([]);
    await page.close();

    const html = await (await fetch(videoUrl(withMedia, '?tq=workshop'), { headers: { Accept: 'text/html' } })).text();
    expect(html.match(/<li><a href="\?t=/g)).toHaveLength(1);
    expect(html).toContain('1 of 2 lines contain “workshop”');
  });

  it('downloads the subtitles as SRT, VTT and text, each charged as a subtitle download', async () => {
    const used = async () =>
      (
        await db.sql<
          { used: number }[]
        >`select coalesce(sum(used), 0)::int as used from usage_counters where limit_name = 'subtitleDownloadsPerDay'`
      )[0]!.used;
    const before = await used();
    const types = { srt: 'application/x-subrip; charset=utf-8', vtt: 'text/vtt; charset=utf-8', txt: 'text/plain; charset=utf-8' };
    for (const [format, type] of Object.entries(types)) {
      const response = await fetch(`${api.url}/videos/${withMedia}/subtitles.${format}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${withMedia}.en.${format}"`);
      expect(await response.text()).toContain('Welcome back to the workshop.');
    }
    expect(await used()).toBe(before + 3);
    // What is left is shown beside the links; with none left they lead to the 429 page instead of a silently cancelled download.
    const { page } = await openTab(browser, api.url);
    await page.goto(`${api.url}/videos/${withMedia}`);
    const left = Number(await page.$eval('.downloads', (element) => element.getAttribute('data-downloads-left')));
    expect(await page.$eval('.downloads', (element) => element.textContent)).toContain(`${left} of 5 left today`);
    expect(await page.$$eval('.downloads a[download]', (links) => links.length)).toBe(3);
    for (let download = 0; download < left; download++) await fetch(`${api.url}/videos/${withMedia}/subtitles.txt`);
    await page.reload();
    expect(await page.$eval('.downloads', (element) => element.textContent)).toMatch(
      /used all 5 subtitle downloads of today; more in \d+ (h|min|s)\b/,
    );
    expect(await page.$$eval('.downloads a[download]', (links) => links.length)).toBe(0);
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('.downloads a')]);
    expect(answer!.status()).toBe(429);
    await page.close();
    await db.sql`delete from usage_counters where limit_name = 'subtitleDownloadsPerDay'`; // for the tests after this one
    const wrong = await fetch(`${api.url}/videos/${withMedia}/subtitles.ass`, { headers: { Accept: 'text/html' } });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('expected subtitles.srt, subtitles.vtt or subtitles.txt');
  });

  it('shows no player for a video without a media file', async () => {
    const { page, problems } = await openTab(browser, api.url);
    await visitSettled(page, videoUrl(withoutMedia));
    expect(await page.$('video')).toBeNull();
    expect(await page.$eval('#player', (element) => element.textContent)).toContain('This server keeps no media file of this video.');
    await expectCleanPage(page, problems);
    await page.close();
  });

  it('tells an anonymous visitor which tiers generate summaries', async () => {
    const html = await (await fetch(videoUrl(withMedia), { headers: { Accept: 'text/html' } })).text();
    expect(html).toContain('Generating summaries is part of the Registered, Plus and Pro tiers.');
    expect(html).not.toContain('class="generate"');
  });

  it('generates a summary from the Generate button and shows it as it arrives', async () => {
    const { session } = await createSignedInUser(db.sql, { tier: 'registered' });
    const { page, problems } = await signedInTab(browser, api.url, session);
    await visitSettled(page, videoUrl(withMedia));
    await Promise.all([page.waitForNavigation(), page.click('form.generate button')]);
    expect(new URL(page.url()).pathname).toBe(`/videos/${withMedia}`);
    // No worker yet: the page follows the generation's stream while it waits.
    await page.waitForSelector('.summary-live progress');
    expect(await page.$('.summary-body')).toBeNull();
    await saveScreenshot(page, 'video-summary-generating');
    worker = await startWorker(
      api.config,
      { sql: db.sql, url: db.url, embedded: false, close: async () => {} },
      createLogger('silent'),
      api.services,
    );
    await page.waitForSelector('.summary-body .tldr', { timeout: 30_000 });
    expect(await page.$('.summary-live')).toBeNull();
    expect(await page.$eval('.summary-body', (element) => element.textContent)).toContain('Written by afterimage-extractive-1');
    await expectCleanPage(page, problems);
    await page.close();
  });

  it('shows a stenogram to its owner only', async () => {
    const owner = await createSignedInUser(db.sql, { tier: 'pro' });
    const other = await createSignedInUser(db.sql, { tier: 'pro' });
    const generated = await fetch(`${api.url}/api/stenograms/${withMedia}/generate`, {
      method: 'POST',
      headers: { 'X-API-Key': owner.key },
    });
    expect(generated.status).toBe(200);
    expect(await generated.text()).toContain('event: stenogram:complete');

    const { page, problems } = await signedInTab(browser, api.url, owner.session);
    await visitSettled(page, videoUrl(withMedia));
    expect(await page.$eval('#stenogram h2', (element) => element.textContent)).toBe('Your stenogram');
    expect(await page.$eval('#stenogram .stenogram', (element) => element.textContent)).toContain('Welcome back to the workshop.');
    await expectCleanPage(page, problems);
    await saveScreenshot(page, 'video-stenogram');
    await page.close();

    // Another person of the tier is offered their own (a Generate button), never the owner's text.
    const othersPage = await (await fetch(videoUrl(withMedia), { headers: { Accept: 'text/html', Cookie: other.cookie } })).text();
    expect(othersPage).toContain('class="generate-stenogram"');
    expect(othersPage).not.toContain('class="stenogram"');
    const anonymousPage = await (await fetch(videoUrl(withMedia), { headers: { Accept: 'text/html' } })).text();
    expect(anonymousPage).not.toContain('id="stenogram"');
    expect(anonymousPage).not.toContain('Your stenogram');
  });

  it('generates a stenogram from the Generate button, shows its progress, then its text, charged to the person', async () => {
    const { user, session } = await createSignedInUser(db.sql, { tier: 'pro' });
    // No worker while the page loads: the generation waits, so its progress is there to see.
    await worker?.stop();
    worker = undefined;
    const { page, problems } = await signedInTab(browser, api.url, session);
    await visitSettled(page, videoUrl(withoutMedia));
    expect(await page.$('#stenogram .stenogram')).toBeNull();
    await Promise.all([page.waitForNavigation(), page.click('form.generate-stenogram button')]);
    expect(new URL(page.url()).pathname).toBe(`/videos/${withoutMedia}`);
    await page.waitForSelector('.stenogram-live progress');
    expect(await page.$eval('#stenogram-status', (element) => element.textContent)).toContain('being written');
    await saveScreenshot(page, 'video-stenogram-generating');
    worker = await startWorker(
      api.config,
      { sql: db.sql, url: db.url, embedded: false, close: async () => {} },
      createLogger('silent'),
      api.services,
    );
    await page.waitForSelector('#stenogram .stenogram', { timeout: 30_000 });
    expect(await page.$('.stenogram-live')).toBeNull();
    expect(await page.$eval('#stenogram .stenogram', (element) => element.textContent)).toContain('Welcome back to the workshop.');
    await expectCleanPage(page, problems);
    await saveScreenshot(page, 'video-stenogram-generated');
    await page.close();
    // A session's generation counts one apiStenogramsPerDay of the person (the session has no key).
    const [used] = await db.sql<{ count: number }[]>`
      select coalesce(sum(used), 0)::int as count from usage_counters where subject = ${user.id} and limit_name = 'apiStenogramsPerDay'`;
    expect(used!.count).toBe(1);
  });

  it('takes no API key as a credential: an L1 key refused a stenogram by the API reads none on the page', async () => {
    // The owner of a stenogram, whose key is now L1: the API refuses it the stenogram (L3 needed).
    const owner = await createSignedInUser(db.sql, { tier: 'pro' });
    const generated = await fetch(`${api.url}/api/stenograms/${withMedia}/generate`, {
      method: 'POST',
      headers: { 'X-API-Key': owner.key },
    });
    expect(await generated.text()).toContain('event: stenogram:complete');
    const { key } = await createApiKey(db.sql, { userId: owner.user.id, scope: 'L1' });
    const read = await fetch(`${api.url}/api/stenograms/@${owner.user.id}/${withMedia}`, { headers: { 'X-API-Key': key } });
    expect(read.status).toBe(403);
    const page = await fetch(videoUrl(withMedia), { headers: { Accept: 'text/html', 'X-API-Key': key } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain('id="stenogram"');
    expect(html).not.toContain('Your stenogram');
    expect(html).toContain('>Sign in</a>');
  });

  it("takes no API key as a credential: an L1 key refused by POST /api/summary/generate generates no summary through the page's form", async () => {
    const readOnly = await createKeyedUser(db.sql, { tier: 'pro', scope: 'L1' });
    const refused = await fetch(`${api.url}/api/summary/generate`, {
      method: 'POST',
      headers: { 'X-API-Key': readOnly.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ videoId: withoutMedia }),
    });
    expect([refused.status, ((await refused.json()) as { error: { message: string } }).error.message]).toEqual([
      403,
      expect.stringContaining('needs an API key with L2+ scope'),
    ]);
    // The form token the page prints for a visitor with this cookie (it prints no form for an anonymous one).
    const cookie = `afterimage_csrf=${'c'.repeat(43)}`;
    const action = `/videos/${withoutMedia}/summary`;
    const token = formToken({ headers: { cookie } } as IncomingMessage, new ServerResponse({} as IncomingMessage), api.config, action);
    const posted = await fetch(`${api.url}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Accept: 'text/html', 'X-API-Key': readOnly.key, Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: token }).toString(),
    });
    expect(posted.status).toBe(403);
    expect(await db.sql`select 1 from summaries where video_id = ${withoutMedia}`).toHaveLength(0);
  });

  it('names the tiers that show the status history to a visitor whose tier does not', async () => {
    await updateTier(db.sql, 'anonymous', { features: { statusHistory: false } });
    try {
      const html = await (await fetch(videoUrl(withMedia), { headers: { Accept: 'text/html' } })).text();
      expect(html).toContain('The status history is shown in the Registered, Plus and Pro tiers.');
      expect(html).not.toContain('class="timeline status-history"');
    } finally {
      await updateTier(db.sql, 'anonymous', { features: { statusHistory: true } });
    }
  });

  it('answers an unknown video with a 404 page', async () => {
    const response = await fetch(videoUrl('AAAAAAAAAAA'), { headers: { Accept: 'text/html' } });
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('No video AAAAAAAAAAA is kept in the archive');
  });
});
