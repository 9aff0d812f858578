/**
 * The demo build (scripts/demo/buildDemo.ts) at a small size, checked through the API: deleted
 * videos for several reasons, a re-upload link, subtitles in several languages, a playable media
 * file, and statuses that came through the status probe (history entries with the recorded
 * platform's evidence), not rows written by hand; and the administrator's watchlist of the three
 * channels, with the rounds' changes in its stream and feed, and a webhook to the demo's receiver.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAtomFeed } from 'feedsmith';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FirstAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle } from '../../core/evidence/verifyBundle.ts';
import { deletionsByMonth } from '../../core/status/deletionsByMonth.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { buildDemo, DEMO_WATCHLIST, type DemoFacts } from '../../scripts/demo/buildDemo.ts';
import { startDemoReceiver } from '../../scripts/demo/demoWebhook.ts';
import { createSignedInUser, startTestApi, type TestApi } from '../support/api.ts';
import { runCli } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
let api: TestApi;
let key: string;
let cookie: string;
let dir: string;
let facts: DemoFacts;
let firstAdmin: FirstAdmin;
/** The build's key and the API's: the watchlist's feed URL is derived from it. */
const SECRET_KEY = 'demo-test-secret-key-0123456789abcdef';

interface Video {
  videoId: string;
  status: string;
  statusReason: string | null;
  reuploadedAs: string | null;
  videoFileUrl: string | null;
  captions: Array<{ language: string; kind: string }>;
}

/** Every video of the demo's three channels that a full-text query finds (each description names its channel). */
async function demoVideos(filter = ''): Promise<Video[]> {
  const { status, body } = await api.call(`/api/fts?q=${encodeURIComponent('Harbour OR Cocina OR Nordlicht')}&pageSize=100${filter}`, {
    key,
  });
  expect(status).toBe(200);
  return body.data.videos;
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'afterimage-demo-'));
  const config = loadConfig({ DATA_DIR: dir, WORKER_CONCURRENCY: '2', SECRET_KEY });
  ({ facts, firstAdmin } = await buildDemo(
    { sql: db.sql, url: db.url, embedded: false, close: async () => {} },
    config,
    createLogger('silent'),
    {
      videosPerChannel: 20,
    },
  ));
  api = await startTestApi(db.sql, { SECRET_KEY, WEBHOOK_ALLOW_PRIVATE: 'true' });
  ({ key, cookie } = await createSignedInUser(db.sql, { tier: 'pro' }));
}, 120_000);

afterAll(async () => {
  await api?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the demo archive', () => {
  it('has deleted videos for at least two reasons, each observed by the watch-page probe with the platform’s message', async () => {
    const deleted = (await demoVideos('&status=deleted')).filter((video) => video.status === 'deleted');
    const reasons = new Set(deleted.map((video) => video.statusReason));
    expect(reasons.size).toBeGreaterThanOrEqual(2);
    expect([...reasons]).toEqual(expect.arrayContaining(['copyright', 'removed_by_uploader']));
    for (const video of deleted.slice(0, 3)) {
      const { data: body } = (await api.call(`/api/videos/${video.videoId}/status-history`, { key })).body;
      const deletion = body.history.find((entry: { status: string }) => entry.status === 'deleted');
      expect(deletion.source).toBe('watch_page');
      expect(deletion.evidence).toContain(`https://www.youtube.com/watch?v=${video.videoId}`);
      // The archive's sighting came first, at yt-dlp's download time.
      expect(body.history[0]).toMatchObject({ status: 'live', source: 'archive' });
    }
  });

  it('has an evidence bundle for each deleted video, holding the recorded platform answer that decided it', async () => {
    const deleted = (await demoVideos('&status=deleted')).filter((video) => video.status === 'deleted');
    expect(deleted.length).toBeGreaterThan(0);
    for (const video of deleted) {
      const answer = await fetch(`${api.url}/api/videos/${video.videoId}/evidence`, { headers: { 'X-API-Key': key } });
      expect(answer.status).toBe(200);
      const verdict = await verifyBundle(bufferBytes(new Uint8Array(await answer.arrayBuffer())));
      expect(verdict, video.videoId).toMatchObject({ ok: true, problems: [] });
    }
    const decided = await db.sql`
      select distinct e.video_id from evidence_observations e
      where e.decided = 'status_change' and e.status_history_id is not null and e.video_id = any(${deleted.map((video) => video.videoId)})`;
    expect(decided).toHaveLength(deleted.length);
  });

  it('links a re-upload, and keeps unverifiable uploads checking', async () => {
    const videos = await demoVideos();
    const reuploaded = videos.filter((video) => video.status === 're-uploaded');
    expect(reuploaded.length).toBeGreaterThanOrEqual(1);
    const { data: body } = (await api.call(`/api/videos/${reuploaded[0]!.videoId}/status-history`, { key })).body;
    expect(body.current.reuploadedAs).toBe(reuploaded[0]!.reuploadedAs);
    expect(body.history.at(-1)).toMatchObject({
      status: 're-uploaded',
      source: 'reupload_link',
      linkedVideoId: reuploaded[0]!.reuploadedAs,
    });
    expect(facts.statuses.checking).toBeGreaterThanOrEqual(1);
  });

  it('shows a video that came back: deleted, then live again', async () => {
    const histories = await Promise.all(
      (await demoVideos('&status=live')).map(
        async (video) => (await api.call(`/api/videos/${video.videoId}/status-history`, { key })).body.data,
      ),
    );
    const back = histories.filter((history) => history.history.some((entry: { status: string }) => entry.status === 'deleted'));
    expect(back.length).toBeGreaterThanOrEqual(1);
    expect(back[0].history.at(-1)).toMatchObject({ status: 'live', previousStatus: 'deleted', source: 'watch_page' });
  });

  it('has subtitles in several languages, manual and auto', async () => {
    const videos = await demoVideos();
    const languages = new Set(videos.flatMap((video) => video.captions.map((caption) => caption.language)));
    expect(languages.size).toBeGreaterThanOrEqual(2);
    const translated = videos.find((video) => video.captions.length >= 2)!;
    for (const { language } of translated.captions) {
      const { status, headers, body } = await api.call(`/api/subtitles/${translated.videoId}?lang=${language}&format=vtt`, { key });
      expect(status).toBe(200);
      expect(headers.get('x-subtitle-language')).toBe(language);
      expect(body).toMatch(/^WEBVTT/);
    }
    const auto = videos.find((video) => video.captions.some((caption) => caption.kind === 'auto'));
    expect(auto).toBeDefined();
  });

  it('dates its deletions over the years the videos span, each after its upload', async () => {
    for (const channel of facts.channels) {
      const months = await deletionsByMonth(db.sql, channel.channelId);
      expect(months.length).toBeGreaterThan(1);
      const years = new Set(months.map((entry) => entry.month.slice(0, 4)));
      expect(years.size).toBeGreaterThan(1);
    }
    const [late] = await db.sql<{ late: number }[]>`
      select count(*)::int as late from video_status_history h join videos v using (video_id)
      where h.source = 'watch_page' and (h.observed_at < v.upload_date + interval '90 days' or h.observed_at > now() - interval '1 day')`;
    expect(late!.late).toBe(0);
  });

  it('offers examples on the home page taken from the archive, each of which finds something', async () => {
    const home = await fetch(`${api.url}/`, { headers: { cookie } });
    const html = await home.text();
    const examples = html.match(/<p class="muted search-examples">(.*?)<\/p>/s)?.[1] ?? '';
    const hrefs = [...examples.matchAll(/href="([^"]+)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'));
    expect(hrefs).toHaveLength(3);
    const [channelHref, wordHref, deletedHref] = hrefs as [string, string, string];
    expect(facts.channels.map((channel) => `/channels/${channel.channelId}`)).toContain(channelHref);
    expect(examples).toContain(facts.channels.find((channel) => channelHref.endsWith(channel.channelId))!.handle);
    for (const href of hrefs) expect((await fetch(`${api.url}${href}`, { headers: { cookie } })).status).toBe(200);
    const word = new URL(wordHref, api.url).searchParams.get('q')!;
    expect((await api.call(`/api/fts?q=${encodeURIComponent(word)}`, { key })).body.data.videos.length).toBeGreaterThan(1);
    const deleted = new URL(deletedHref, api.url).searchParams;
    expect(deleted.get('status')).toBe('deleted');
    const found = (await api.call(`/api/fts?q=${encodeURIComponent(deleted.get('q')!)}&status=deleted`, { key })).body.data.videos;
    expect(found.length).toBeGreaterThanOrEqual(1);
  });

  it('says in the player that the archived file is a clip of the video', async () => {
    const withFile = (await demoVideos()).find((video) => video.videoFileUrl)!;
    const page = await (await fetch(`${api.url}/videos/${withFile.videoId}`, { headers: { cookie } })).text();
    expect(page).toMatch(/The archived file is a clip of 4 s \(0:04 of the video's \d+:\d\d\)/);
  });

  it('serves a playable media file in byte ranges', async () => {
    const withFile = (await demoVideos()).find((video) => video.videoFileUrl);
    expect(withFile).toBeDefined();
    const response = await fetch(`${api.url}${withFile!.videoFileUrl}`, { headers: { 'X-API-Key': key, Range: 'bytes=0-11' } });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await response.arrayBuffer()).toString('latin1')).toMatch(/^RIFF....WAVE$/s);
  });
});

describe('the demo watchlist', () => {
  it('is the administrator’s, watching the three channels', async () => {
    expect(firstAdmin.email).toBe('admin@afterimage.localhost');
    const { status, body } = await api.call(`/api/watchlists/${facts.watchlist.id}`, { key: firstAdmin.key });
    expect(status).toBe(200);
    expect(body.data.name).toBe(DEMO_WATCHLIST);
    expect(body.data.items.map((item: { channelId: string }) => item.channelId).sort()).toEqual(
      facts.channels.map((channel) => channel.channelId).sort(),
    );
  });

  it('holds the rounds’ confirmed deletions, re-uploads and restorations as changes', async () => {
    expect(facts.watchlist.changes['video.deleted']).toBeGreaterThanOrEqual(1);
    expect(facts.watchlist.changes['video.reuploaded']).toBeGreaterThanOrEqual(1);
    expect(facts.watchlist.changes['video.restored']).toBeGreaterThanOrEqual(1);
    const { status, body } = await api.call(`/api/watchlists/${facts.watchlist.id}/changes?limit=100`, { key: firstAdmin.key });
    expect(status).toBe(200);
    const types = new Set(body.data.items.map((change: { type: string }) => change.type));
    expect(types).toContain('video.deleted');
  });

  it('has a private Atom feed of its changes', async () => {
    const { body } = await api.call(`/api/watchlists/${facts.watchlist.id}`, { key: firstAdmin.key });
    const response = await fetch(body.data.feedUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/atom+xml');
    const feed = parseAtomFeed(await response.text());
    expect(feed.entries?.length).toBeGreaterThanOrEqual(1);
    expect(feed.entries!.some((entry) => entry.title?.value?.startsWith('Deleted: '))).toBe(true);
  });

  it('sends its webhook to the demo’s receiver, signed, a started receiver replacing the previous one', async () => {
    const lines: string[] = [];
    const worker = await startWorker(
      api.config,
      { sql: db.sql, url: db.url, embedded: false, close: async () => {} },
      createLogger('silent'),
      api.services,
    );
    const deps = { sql: db.sql, serverKey: api.services.serverKey };
    const receivers = [await startDemoReceiver(deps, facts.watchlist, (line) => lines.push(line))];
    try {
      receivers.push(await startDemoReceiver(deps, facts.watchlist, (line) => lines.push(line)));
      const [latest] = receivers.slice(-1);
      for (const deadline = Date.now() + 15_000; latest!.received.length === 0 && Date.now() < deadline; ) {
        await new Promise((done) => setTimeout(done, 50));
      }
      expect(latest!.received).toEqual([{ type: 'webhook.test', title: null, verified: true }]);
      expect(lines).toContain('demo: webhook received webhook.test (signature verified)');
      const { body } = await api.call(`/api/watchlists/${facts.watchlist.id}/webhooks`, { key: firstAdmin.key });
      expect(body.data.webhooks.map((endpoint: { url: string }) => endpoint.url)).toEqual([latest!.url]);
    } finally {
      await worker.stop();
      for (const receiver of receivers) await receiver.close();
    }
  });
});

describe('afterimage demo', () => {
  it('refuses a size it cannot build, before touching anything, and says what it takes', async () => {
    const result = await runCli(['demo', '--videos', '5', '--dir', join(dir, 'never-built')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--videos 5: expected a whole number from 10 to 1000');
    expect(result.stderr).toContain('usage: npx afterimage demo');
    expect(existsSync(join(dir, 'never-built'))).toBe(false);
  });
});
