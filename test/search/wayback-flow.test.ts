import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { unzipSync } from 'fflate';
import { cdxDigest } from '../../core/sources/wayback/cdxDigest.ts';
import { createKeyedUser, createSignedInUser, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';
import { start as startWayback, ts, type ChannelFixture, type VideoFixture, type WaybackServer } from '../kit/servers/wayback-server.ts';

// Archive look-ups through the real Wayback source against a local server in the CDX and capture
// formats: a channel known only to the archive, paged with "continue".
let db: TestDatabase;
let api: TestApi;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let wayback: WaybackServer;
let key: string;
const channel: ChannelFixture = { channelId: fakeChannelId('flow-channel'), title: 'Gone Channel', handle: '@gonechannel' };
const videos: VideoFixture[] = Array.from({ length: 70 }, (_, index) => ({
  videoId: fakeVideoId(`flow-${index}`),
  channelId: channel.channelId,
  title: `Archived video ${index}`,
  description: `Recovered from a capture ${index}`,
  lengthSeconds: 100 + index,
  uploadDate: '2015-03-04',
  author: channel.title,
}));
const removed: VideoFixture = { videoId: fakeVideoId('flow-removed'), channelId: channel.channelId, title: 'Removed later' };

beforeAll(async () => {
  db = await createTestDatabase();
  wayback = await startWayback();
  for (const [index, video] of videos.entries()) wayback.addVideo(video, [{ timestamp: ts(2016, 1 + (index % 12), 2) }]);
  // The first video's thumbnail was archived the day after its watch page; the others' never were.
  wayback.addCapture({
    url: `https://i.ytimg.com/vi/${videos[0]!.videoId}/hqdefault.jpg`,
    timestamp: ts(2016, 1, 3),
    mimetype: 'image/jpeg',
    body: await sharp({ create: { width: 480, height: 360, channels: 3, background: '#2e86de' } })
      .jpeg()
      .toBuffer(),
  });
  wayback.addVideo(removed, [
    { timestamp: ts(2016, 2) },
    { timestamp: ts(2019, 4), kind: 'removed', reason: 'This video has been removed by the uploader' },
  ]);
  wayback.addListing(channel, {
    timestamp: ts(2016, 6),
    form: 'channel',
    tab: '/videos',
    videoIds: [...videos.slice(0, 40).map((video) => video.videoId), removed.videoId],
  });
  wayback.addListing(channel, {
    timestamp: ts(2017, 6),
    form: 'channel',
    tab: '/videos',
    videoIds: videos.slice(35).map((video) => video.videoId),
  });
  wayback.addListing(channel, { timestamp: ts(2017, 7), form: 'handle', videoIds: videos.slice(60).map((video) => video.videoId) });
  stack = await startSearchStack(db, {
    ARCHIVE_DIR: '/nonexistent/afterimage-archive',
    WAYBACK_ENABLED: 'true',
    WAYBACK_URL: wayback.url,
    SOURCE_TIMEOUT_MS: '3000',
  });
  api = stack.api;
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await stack?.close();
  await wayback?.close();
  await db?.drop();
});

const post = (path: string, body?: unknown) =>
  api.call(path, { method: 'POST', key, ...(body ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}) });
const videosOf = (events: Array<{ event: string; data: any }>) =>
  events.filter((event) => event.event === 'search:video').map((event) => event.data);

describe('archive look-ups paged with continue', () => {
  it('resolves a channel only the archive knows, streams the first page, and pages through the rest', async () => {
    const started = await post('/api/search', { query: `https://www.youtube.com/channel/${channel.channelId}` });
    expect(started.status).toBe(200);
    expect(started.body.data.channelId).toBe(channel.channelId);
    const first = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 30_000 });
    expect(first.events.at(-1)!.event).toBe('search:complete');
    const found = new Map(videosOf(first.events).map((video) => [video.videoId, video]));
    expect(found.size).toBeGreaterThan(0);

    expect(first.events.at(-1)!.data.morePages).toBe(true);

    let session = started.body.data.searchSessionId as string;
    let morePages = true;
    for (let page = 0; page < 10 && morePages; page++) {
      const next = await post(`/api/search/${session}/continue`);
      expect(next.status).toBe(200);
      expect(next.body.data.sseEndpointUrl).not.toBe(started.body.data.sseEndpointUrl);
      session = next.body.data.searchSessionId;
      const { events } = await readStream(`${api.url}${next.body.data.sseEndpointUrl}`, { key, timeoutMs: 30_000 });
      expect(events.at(-1)!.event).toBe('search:complete');
      for (const video of videosOf(events)) found.set(video.videoId, video);
      morePages = events.at(-1)!.data.morePages;
    }
    expect(morePages).toBe(false);
    // Paged to the end, continue still answers a stream: one that says there is nothing further.
    const after = await post(`/api/search/${session}/continue`);
    expect(after.status).toBe(200);
    const { events: last } = await readStream(`${api.url}${after.body.data.sseEndpointUrl}`, { key, timeoutMs: 30_000 });
    expect(last.at(-1)).toMatchObject({ event: 'search:complete', data: { morePages: false, failedSources: [] } });
    expect(last.at(-1)!.data.reason).toContain('no further page');
    for (const video of [...videos, removed]) expect(found.has(video.videoId)).toBe(true);
    const sample = found.get(videos[3]!.videoId);
    expect(sample).toMatchObject({ title: 'Archived video 3', duration: 103, channelId: channel.channelId });
    expect(sample.archiveUrl).toMatch(/\/web\/\d{14}\//);
    const provenance = await db.sql`select count(*)::int as n from video_sources where source = 'wayback' and evidence_url like '%/web/%'`;
    expect(provenance[0]!.n).toBe(videos.length + 1);
  });

  it("keeps, in the worker's background, the thumbnail the Wayback archived of a video it found", async () => {
    const kept = async () =>
      db.sql<{ videoId: string; width: number }[]>`select video_id as "videoId", width from video_thumbnails where source = 'wayback'`;
    for (let waited = 0; waited < 30_000 && (await kept()).length === 0; waited += 250) await sleep(250);
    expect(await kept()).toEqual([{ videoId: videos[0]!.videoId, width: 480 }]);
    const image = await fetch(`${api.url}/api/videos/${videos[0]!.videoId}/thumbnail?w=320`);
    expect(image.status).toBe(200);
    expect((await sharp(Buffer.from(await image.arrayBuffer())).metadata()).width).toBe(320);
  });

  it("keeps the capture that filled in a video's metadata, with its timestamp and CDX digest, named by the bundle and the video page", async () => {
    const videoId = removed.videoId;
    const [kept] = await db.sql`
      select id::text, source, decided, wayback_timestamp, cdx_digest, request_url, body_gzip from evidence_observations
      where video_id = ${videoId} and decided = 'metadata_filled'`;
    expect(kept).toMatchObject({ source: 'wayback', wayback_timestamp: ts(2016, 2) });
    const body = gunzipSync(kept!.body_gzip);
    expect(body.toString()).toContain('Removed later');
    expect(kept!.cdx_digest).toBe(cdxDigest(body));
    expect(kept!.request_url).toMatch(/^https:\/\/web\.archive\.org\/web\/\d{14}id_\/https:\/\/www\.youtube\.com\/watch\?v=/);
    const capture = `https://web.archive.org/web/${ts(2016, 2)}/https://www.youtube.com/watch?v=${videoId}`;

    const bundle = await fetch(`${api.url}/api/videos/${videoId}/evidence`, { headers: { 'X-API-Key': key } });
    const files = unzipSync(new Uint8Array(await bundle.arrayBuffer()));
    const metadata = JSON.parse(Buffer.from(files['metadata-versions.json']!).toString());
    expect(metadata.current).toMatchObject({ title: 'Removed later', observation: `observations/${kept!.id}.json` });
    const record = JSON.parse(Buffer.from(files[`observations/${kept!.id}.json`]!).toString());
    expect(record).toMatchObject({
      decided: 'metadata_filled',
      waybackTimestamp: ts(2016, 2),
      cdxDigest: kept!.cdx_digest,
      captureUrl: capture,
    });

    const person = await createSignedInUser(db.sql);
    const html = await (await fetch(`${api.url}/videos/${videoId}`, { headers: { Accept: 'text/html', Cookie: person.cookie } })).text();
    expect(html).toContain(`href="/videos/${videoId}/evidence/${kept!.id}"`);
    expect(html).toContain(`href="${capture.replaceAll('&', '&amp;')}"`);
  });
});
