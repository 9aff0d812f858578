import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepThumbnailCapture } from '../../core/evidence/keepCapture.ts';
import { keptObservations } from '../../core/evidence/observations.ts';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { cdxDigest } from '../../core/sources/wayback/cdxDigest.ts';
import { waybackThumbnailFetcher } from '../../core/sources/wayback/thumbnail.ts';
import { loadVideos } from '../../core/videos/loadVideos.ts';
import { thumbnailHeight, THUMBNAIL_WIDTHS } from '../../core/videos/thumbnailImage.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { enqueueWaybackThumbnails, keepWaybackThumbnail } from '../../core/videos/waybackThumbnails.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { fakeVideoId } from '../kit/ids.ts';
import { start as startWayback, type WaybackServer } from '../kit/servers/wayback-server.ts';
import { createKeyedUser, createSignedInUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// A yt-dlp folder with thumbnails beside some info.json files, imported as `afterimage import` does,
// and a video only the Wayback knows, whose thumbnail is read from the Wayback stand-in.
let db: TestDatabase;
let api: TestApi;
let archive: ArchiveFixture;
let wayback: WaybackServer;
let withThumbnail: string;
let withoutThumbnail: string;

/** A 4:3 test card like hqdefault.jpg: black bars above and below a coloured 16:9 picture. */
const testCard = (format: 'jpeg' | 'png') =>
  sharp({ create: { width: 480, height: 360, channels: 3, background: '#000' } })
    .composite([{ input: { create: { width: 480, height: 270, channels: 3, background: '#3a7bd5' } }, top: 45, left: 0 }])
    [format]()
    .toBuffer();

beforeAll(async () => {
  db = await createTestDatabase();
  archive = await createArchiveFixture({ videos: 6, mediaEvery: 2, subtitlesEvery: 0, flatOnly: 0, legacyChannel: false });
  const [first, second] = [...archive.mediaFiles.entries()];
  withThumbnail = first![0];
  withoutThumbnail = archive.videoIds.find((id) => !archive.mediaFiles.has(id))!;
  // yt-dlp --write-thumbnail: <base>.jpg (or .webp, .png) beside <base>.info.json.
  for (const [[, mediaName], format] of [
    [first!, 'jpeg'],
    [second!, 'png'],
  ] as const) {
    const base = join(archive.dir, archive.channelTitle, mediaName.replace(/\.mp4$/, ''));
    await writeFile(`${base}.${format === 'jpeg' ? 'jpg' : 'png'}`, await testCard(format));
  }
  await storeArchiveScan(db.sql, await scanArchive(archive.dir));
  wayback = await startWayback();
  api = await startTestApi(db.sql);
});

afterAll(async () => {
  await api?.close();
  await wayback?.close();
  await archive?.cleanup();
  await db?.drop();
});

const thumbnailOf = (id: string, width?: number) => `/api/videos/${id}/thumbnail${width ? `?w=${width}` : ''}`;

/** Anonymously, as a page's <img> asks. */
async function fetchImage(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${api.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('an archive import', () => {
  it('keeps the thumbnail files beside the info.json as references, and the video objects point at this API', async () => {
    const rows = await db.sql<{ videoId: string; fileUrl: string }[]>`
      select video_id as "videoId", file_url as "fileUrl" from video_thumbnails where source = 'archive' order by file_url`;
    expect(rows).toHaveLength(2);
    expect(rows.map((row) => row.fileUrl).sort()).toEqual(
      [...archive.mediaFiles.values()]
        .slice(0, 2)
        .map((name) => `file://${join(archive.dir, archive.channelTitle, name.replace(/\.mp4$/, ''))}`)
        .map((base, index) => encodeURI(`${base}.${index === 0 ? 'jpg' : 'png'}`))
        .sort(),
    );
    const [shown, bare] = await loadVideos(db.sql, [withThumbnail, withoutThumbnail]);
    expect(shown!.thumbnailFileUrl).toBe(thumbnailOf(withThumbnail));
    expect(bare!.thumbnailFileUrl).toBeNull();
  });
});

describe('GET /api/videos/:videoId/thumbnail', () => {
  it.each(THUMBNAIL_WIDTHS)('serves 16:9 WebP %i pixels wide, without a key', async (width) => {
    const answer = await fetchImage(thumbnailOf(withThumbnail, width));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/webp');
    expect(answer.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(answer.headers.get('etag')).toMatch(/^"[^"]+"$/);
    const image = await sharp(answer.bytes).metadata();
    expect({ format: image.format, width: image.width, height: image.height }).toEqual({
      format: 'webp',
      width,
      height: thumbnailHeight(width),
    });
    // Cropped to 16:9: the test card's black bars are gone, its centre is the picture's blue.
    const { data } = await sharp(answer.bytes)
      .extract({ left: width / 2, top: 1, width: 1, height: 1 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(data[2]).toBeGreaterThan(150);
  });

  it('answers 320 pixels without w, a 304 to its ETag, and another ETag per width', async () => {
    const plain = await fetchImage(thumbnailOf(withThumbnail));
    expect((await sharp(plain.bytes).metadata()).width).toBe(320);
    const tag = plain.headers.get('etag')!;
    expect(tag).toBe((await fetchImage(thumbnailOf(withThumbnail, 320))).headers.get('etag'));
    expect(tag).not.toBe((await fetchImage(thumbnailOf(withThumbnail, 640))).headers.get('etag'));
    const again = await fetchImage(thumbnailOf(withThumbnail), { 'If-None-Match': tag });
    expect(again.status).toBe(304);
    expect(again.bytes).toHaveLength(0);
  });

  it('refuses a width it does not make (400) and answers 404 where no thumbnail is kept', async () => {
    const odd = await fetchImage(thumbnailOf(withThumbnail, 200));
    expect(odd.status).toBe(400);
    expect(JSON.parse(odd.bytes.toString()).error.code).toBe('INVALID_INPUT');
    const none = JSON.parse((await fetchImage(thumbnailOf(withoutThumbnail))).bytes.toString());
    expect(none.error).toMatchObject({ code: 'NOT_FOUND', details: { reason: 'no_thumbnail' } });
    const unknown = await fetchImage(thumbnailOf(fakeVideoId('nothing')));
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.bytes.toString()).error.details.reason).toBe('unknown_video');
  });
});

describe('a thumbnail from a Wayback capture', () => {
  it('is queued for a video stored with a capture, read through the Wayback at that time and served', async () => {
    const videoId = fakeVideoId('wayback-thumbnail');
    const [channelId] = await db.sql<{ channelId: string }[]>`select channel_id as "channelId" from videos limit 1`;
    const archiveUrl = `https://web.archive.org/web/20190301120000/https://www.youtube.com/watch?v=${videoId}`;
    await db.sql.begin((tx) => upsertVideos(tx, 'wayback', [{ videoId, channelId: channelId!.channelId, title: 'Captured', archiveUrl }]));
    await db.sql.begin((tx) => enqueueWaybackThumbnails(tx, [videoId, withThumbnail]));
    const jobs = await db.sql<{ key: string }[]>`
      select key from graphile_worker.jobs where task_identifier = 'fetch_thumbnail' order by key`;
    // The archive's video has a thumbnail already: only the Wayback's is queued.
    expect(jobs.map((job) => job.key)).toEqual([`thumbnail:${videoId}`]);

    // Captured a day later than the watch page: the Wayback redirects to the nearest capture.
    wayback.addCapture({
      url: `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
      timestamp: '20190302080000',
      mimetype: 'image/jpeg',
      body: await testCard('jpeg'),
    });
    const fetcher = waybackThumbnailFetcher({ captureBase: wayback.captureBaseUrl, fetchOptions: { retries: 0, timeoutMs: 5_000 } });
    expect(await keepWaybackThumbnail(db.sql, fetcher, videoId, keepThumbnailCapture)).toBe('kept');
    expect(
      wayback.requests().some((entry) => entry.path.includes(`20190301120000im_/https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`)),
    ).toBe(true);
    const [kept] =
      await db.sql`select width, height, length(bytes) as size, content_hash, capture_url from video_thumbnails where video_id = ${videoId}`;
    expect(kept).toMatchObject({
      width: 480,
      height: 360,
      capture_url: `https://web.archive.org/web/20190301120000im_/https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
    });
    expect(kept!.content_hash).toMatch(/^[0-9a-f]{64}$/);
    // The Wayback's answer is kept as evidence: the capture's timestamp, its CDX digest, and the link to it.
    const [observation] = await keptObservations(db.sql, videoId);
    expect(observation).toMatchObject({
      source: 'wayback',
      decided: 'thumbnail',
      requestUrl: `https://web.archive.org/web/20190301120000im_/https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
      httpStatus: 200,
      contentType: 'image/jpeg',
      waybackTimestamp: '20190301120000',
      cdxDigest: cdxDigest(await testCard('jpeg')),
      captureUrl: `https://web.archive.org/web/20190301120000/https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
    });
    const person = await createSignedInUser(db.sql);
    const page = await (await fetch(`${api.url}/videos/${videoId}`, { headers: { Accept: 'text/html', Cookie: person.cookie } })).text();
    expect(page).toContain(`href="${observation!.captureUrl}"`);
    const { key } = await createKeyedUser(db.sql);
    const bundle = unzipSync(
      new Uint8Array(await (await fetch(`${api.url}/api/videos/${videoId}/evidence`, { headers: { 'X-API-Key': key } })).arrayBuffer()),
    );
    expect(JSON.parse(Buffer.from(bundle[`observations/${observation!.id}.json`]!).toString())).toMatchObject({
      waybackTimestamp: '20190301120000',
      cdxDigest: observation!.cdxDigest,
      captureUrl: observation!.captureUrl,
    });
    expect(await keepWaybackThumbnail(db.sql, fetcher, videoId, keepThumbnailCapture)).toBe('already_kept');
    expect(await keptObservations(db.sql, videoId)).toHaveLength(1);

    const answer = await fetchImage(thumbnailOf(videoId, 160));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('public, max-age=2592000');
    expect((await sharp(answer.bytes).metadata()).height).toBe(90);
  });

  it('keeps nothing when the Wayback holds no image or something else', async () => {
    const [channel] = await db.sql<{ channelId: string }[]>`select channel_id as "channelId" from videos limit 1`;
    const [absent, notImage] = [fakeVideoId('no-image'), fakeVideoId('html-image')];
    await db.sql.begin((tx) =>
      upsertVideos(
        tx,
        'wayback',
        [absent, notImage].map((videoId) => ({
          videoId,
          channelId: channel!.channelId,
          archiveUrl: `https://web.archive.org/web/20200101000000/https://www.youtube.com/watch?v=${videoId}`,
        })),
      ),
    );
    wayback.addCapture({ url: `https://i.ytimg.com/vi/${notImage}/hqdefault.jpg`, timestamp: '20200101000000', body: '<html>no</html>' });
    const fetcher = waybackThumbnailFetcher({ captureBase: wayback.captureBaseUrl, fetchOptions: { retries: 0, timeoutMs: 5_000 } });
    expect(await keepWaybackThumbnail(db.sql, fetcher, absent, keepThumbnailCapture)).toBe('not_archived');
    expect(await keepWaybackThumbnail(db.sql, fetcher, notImage, keepThumbnailCapture)).toBe('not_an_image');
    expect(await db.sql`select from video_thumbnails where video_id in ${db.sql([absent, notImage])}`).toHaveLength(0);
  });
});
