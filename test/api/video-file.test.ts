import { randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { open, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRange } from '../../api/http/sendFile.ts';
import { buildOpenApi } from '../../api/openapi.ts';
import { allRoutes } from '../../api/routes/index.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { loadVideos } from '../../core/videos/loadVideos.ts';
import { mediaType } from '../../core/videos/mediaFile.ts';
import { upsertChannel, upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { awaitFreshWindow } from '../support/http-helpers.ts';

// A yt-dlp folder imported as `afterimage import` does, its media files served by the real API.
let db: TestDatabase;
let api: TestApi;
let archive: ArchiveFixture;
let key: string;
let videoId: string;
let mediaPath: string;
let content: Buffer;
let others: string[];
let withoutFile: string;

beforeAll(async () => {
  db = await createTestDatabase();
  archive = await createArchiveFixture({ videos: 20, mediaEvery: 2, subtitlesEvery: 0, flatOnly: 0, legacyChannel: false });
  const scan = await scanArchive(archive.dir);
  for (const channel of scan.channels) await upsertChannel(db.sql, channel);
  await db.sql.begin((tx) =>
    upsertVideos(
      tx,
      'archive',
      scan.videos.filter((video) => video.channelId),
    ),
  );
  [videoId, ...others] = [...archive.mediaFiles.keys()] as [string, ...string[]];
  withoutFile = archive.videoIds.find((id) => !archive.mediaFiles.has(id))!;
  // Known bytes, larger than one read of the stream, so that ranges and whole answers can be compared.
  mediaPath = join(archive.dir, archive.channelTitle, archive.mediaFiles.get(videoId)!);
  content = randomBytes(300_000);
  await writeFile(mediaPath, content);
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await api?.close();
  await archive?.cleanup();
  await db?.drop();
});

const fileOf = (id: string) => `/api/videos/${id}/file`;

/** The answer's bytes as they came (api.call reads text). */
async function fetchBytes(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${api.url}${path}`, { method, headers: { 'X-API-Key': key, ...headers } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('videoFileUrl', () => {
  it("points at this API, never at the server's disk, and only when there is a file", async () => {
    const stored = await db.sql<Array<{ url: string }>>`select video_file_url as url from videos where video_id = ${videoId}`;
    expect(stored[0]!.url).toBe(pathToFileURL(mediaPath).href);
    const [without] = await loadVideos(db.sql, [withoutFile]);
    expect(without!.videoFileUrl).toBeNull();
    const ids = [...archive.mediaFiles.keys()];
    const shown = await loadVideos(db.sql, ids);
    expect(shown.map((video) => video.videoFileUrl)).toEqual(ids.map(fileOf));
  });

  it('is the URL the file is served at', async () => {
    const [video] = await loadVideos(db.sql, [videoId]);
    const answer = await fetchBytes(video!.videoFileUrl!);
    expect(answer.status).toBe(200);
    expect(answer.bytes.equals(content)).toBe(true);
  });
});

describe('GET /api/videos/:videoId/file', () => {
  it('streams the whole file with its type, validators and an inline download name', async () => {
    const answer = await fetchBytes(fileOf(videoId));
    expect(answer.status).toBe(200);
    expect(answer.bytes.equals(content)).toBe(true);
    expect(answer.headers.get('content-type')).toBe('video/mp4');
    expect(answer.headers.get('content-length')).toBe(String(content.length));
    expect(answer.headers.get('accept-ranges')).toBe('bytes');
    expect(answer.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(answer.headers.get('last-modified')).toMatch(/GMT$/);
    expect(answer.headers.get('content-disposition')).toBe(`inline; filename="${videoId}.mp4"`);
    expect(answer.headers.get('content-range')).toBeNull();
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=1000-', 1000, 299_999],
    ['bytes=-500', 299_500, 299_999],
    ['bytes=299990-5000000', 299_990, 299_999],
    ['bytes=-400000', 0, 299_999],
    ['bytes=7-7', 7, 7],
  ])('answers %s with 206 and those bytes', async (range, start, end) => {
    const answer = await fetchBytes(fileOf(videoId), { Range: range });
    expect(answer.status).toBe(206);
    expect(answer.headers.get('content-range')).toBe(`bytes ${start}-${end}/${content.length}`);
    expect(answer.headers.get('content-length')).toBe(String(end - start + 1));
    expect(answer.bytes.equals(content.subarray(start, end + 1))).toBe(true);
  });

  it.each(['bytes=0-9,20-29', 'bytes=abc', 'items=0-5', 'bytes=9-3', 'bytes=-'])(
    'answers the whole file (200) to Range: %s',
    async (range) => {
      const answer = await fetchBytes(fileOf(videoId), { Range: range });
      expect(answer.status).toBe(200);
      expect(answer.bytes.equals(content)).toBe(true);
    },
  );

  it.each(['bytes=300000-', 'bytes=400000-500000', 'bytes=-0'])('answers 416 in the error envelope to Range: %s', async (range) => {
    const answer = await api.call(fileOf(videoId), { key, headers: { Range: range } });
    expect(answer.status).toBe(416);
    expect(answer.headers.get('content-range')).toBe(`bytes */${content.length}`);
    expect(answer.body.error.code).toBe('INVALID_INPUT');
    expect(answer.body.error.message).toContain('300000 bytes');
  });

  it("answers 304 while the client's copy is current, by ETag (weakly compared) or date; a 304 counts no request", async () => {
    await awaitFreshWindow(db.sql);
    const { headers } = await fetchBytes(fileOf(videoId), { Range: 'bytes=0-0', 'Accept-Encoding': 'gzip, br' });
    // A media file is never coded, whatever the client accepts.
    expect(headers.get('content-encoding')).toBeNull();
    const remaining = Number(headers.get('ratelimit-remaining'));
    const etag = headers.get('etag')!;
    const conditions: Array<Record<string, string>> = [
      { 'If-None-Match': etag },
      { 'If-None-Match': `"other", W/${etag}` },
      { 'If-None-Match': '*' },
      { 'If-Modified-Since': headers.get('last-modified')! },
    ];
    for (const condition of conditions) {
      const answer = await fetchBytes(fileOf(videoId), condition);
      expect(answer.status).toBe(304);
      expect(answer.bytes.length).toBe(0);
      expect(answer.headers.get('etag')).toBe(etag);
      expect(answer.headers.get('ratelimit-remaining')).toBeNull();
    }
    // If-None-Match wins over If-Modified-Since.
    const changed = await fetchBytes(fileOf(videoId), { 'If-None-Match': '"other"', 'If-Modified-Since': headers.get('last-modified')! });
    expect(changed.status).toBe(200);
    expect(Number(changed.headers.get('ratelimit-remaining'))).toBe(remaining - 1);
    expect(changed.bytes.equals(content)).toBe(true);
  });

  it('honours a range only while If-Range names the current file', async () => {
    const { headers } = await fetchBytes(fileOf(videoId), { Range: 'bytes=0-0' });
    const current = await fetchBytes(fileOf(videoId), { Range: 'bytes=10-19', 'If-Range': headers.get('etag')! });
    expect(current.status).toBe(206);
    expect(current.bytes.equals(content.subarray(10, 20))).toBe(true);
    const byDate = await fetchBytes(fileOf(videoId), { Range: 'bytes=10-19', 'If-Range': headers.get('last-modified')! });
    expect(byDate.status).toBe(206);
    for (const stale of ['"stale"', `W/${headers.get('etag')!}`, 'Thu, 01 Jan 2004 00:00:00 GMT']) {
      const answer = await fetchBytes(fileOf(videoId), { Range: 'bytes=10-19', 'If-Range': stale });
      expect(answer.status).toBe(200);
      expect(answer.bytes.equals(content)).toBe(true);
    }
  });

  it('refuses with 412 when If-Match or If-Unmodified-Since names another file', async () => {
    const { headers } = await fetchBytes(fileOf(videoId), { Range: 'bytes=0-0' });
    expect((await fetchBytes(fileOf(videoId), { 'If-Match': headers.get('etag')! })).status).toBe(200);
    const refused = await api.call(fileOf(videoId), { key, headers: { 'If-Match': '"another"' } });
    expect(refused.status).toBe(412);
    expect(refused.body.error.code).toBe('INVALID_INPUT');
    expect((await fetchBytes(fileOf(videoId), { 'If-Unmodified-Since': 'Thu, 01 Jan 2004 00:00:00 GMT' })).status).toBe(412);
  });

  it('answers HEAD with the headers of the GET and no body', async () => {
    const whole = await fetchBytes(fileOf(videoId), {}, 'HEAD');
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe(String(content.length));
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.bytes.length).toBe(0);
    const part = await fetchBytes(fileOf(videoId), { Range: 'bytes=-10' }, 'HEAD');
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${content.length - 10}-${content.length - 1}/${content.length}`);
  });

  it("names the media type by the recorded file's extension", async () => {
    const cases = [
      ['webm', 'video/webm'],
      ['mkv', 'video/x-matroska'],
      ['opus', 'audio/ogg'],
    ] as const;
    for (const [index, [extension, type]] of cases.entries()) {
      const id = others[index]!;
      const path = join(archive.dir, `${id}.${extension}`);
      await writeFile(path, Buffer.from(extension));
      await db.sql`update videos set video_file_url = ${pathToFileURL(path).href} where video_id = ${id}`;
      const answer = await fetchBytes(fileOf(id));
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe(type);
      expect(answer.headers.get('content-disposition')).toBe(`inline; filename="${id}.${extension}"`);
      expect(answer.bytes.toString()).toBe(extension);
    }
  });

  it('answers an empty file with 200 and no bytes, and any range of it with 416', async () => {
    const id = others[3]!;
    const path = join(archive.dir, `${id}.m4a`);
    await writeFile(path, Buffer.alloc(0));
    await db.sql`update videos set video_file_url = ${pathToFileURL(path).href} where video_id = ${id}`;
    const answer = await fetchBytes(fileOf(id));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-length')).toBe('0');
    expect(answer.headers.get('content-type')).toBe('audio/mp4');
    expect((await fetchBytes(fileOf(id), { Range: 'bytes=-5' })).status).toBe(416);
  });

  it('tells an unknown video, a video without a file, a remote copy and a vanished file (or a folder) apart (404)', async () => {
    const remote = archive.videoIds.filter((id) => !archive.mediaFiles.has(id))[1]!;
    await db.sql`update videos set video_file_url = 'https://archive.org/download/x/x.mp4' where video_id = ${remote}`;
    const vanished = others[4]!;
    const [stored] = await db.sql<Array<{ url: string }>>`select video_file_url as url from videos where video_id = ${vanished}`;
    await rm(new URL(stored!.url));
    const folder = others[6]!;
    await db.sql`update videos set video_file_url = ${pathToFileURL(archive.dir).href} where video_id = ${folder}`;
    for (const [id, reason] of [
      ['Zz9Zz9Zz9Zz', 'unknown_video'],
      [withoutFile, 'no_archived_file'],
      [remote, 'no_archived_file'],
      [vanished, 'file_missing'],
      [folder, 'file_missing'],
    ]) {
      const answer = await api.call(fileOf(id!), { key });
      expect(answer.status, id).toBe(404);
      expect(answer.body.error).toMatchObject({ code: 'NOT_FOUND', details: { reason } });
    }
    expect((await loadVideos(db.sql, [remote]))[0]!.videoFileUrl).toBe('https://archive.org/download/x/x.mp4');
  });

  it('takes nothing from the request as a path', async () => {
    for (const id of ['..%2F..%2Fetc', '%2Fetc%2Fpasswd', 'abc']) {
      const answer = await api.call(fileOf(id), { key });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('INVALID_INPUT');
    }
  });

  it("needs a key and the tier's subtitleDownload feature; counts no subtitle download", async () => {
    expect((await api.call(fileOf(videoId))).status).toBe(401);
    await fetchBytes(fileOf(videoId));
    const usage = await api.call('/api/features', { key });
    expect(usage.body.data.limits.subtitleDownloadsPerDay.used).toBe(0);
    await db.sql`update tier_features set enabled = false where tier = 'pro' and feature = 'subtitleDownload'`;
    try {
      const refused = await api.call(fileOf(videoId), { key });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('FEATURE_DISABLED');
    } finally {
      await db.sql`update tier_features set enabled = true where tier = 'pro' and feature = 'subtitleDownload'`;
    }
  });

  it('reads the file only as fast as the client takes it, and closes it when the client leaves', async () => {
    const id = others[5]!;
    const path = join(archive.dir, `${id}.mkv`);
    // Sparse: far more than the sockets' buffers can hold, at no cost on disk.
    const big = await open(path, 'w');
    await big.truncate(1 << 30);
    await big.close();
    await db.sql`update videos set video_file_url = ${pathToFileURL(path).href} where video_id = ${id}`;
    const openOnFile = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === path;
        } catch {
          return false;
        }
      }).length;

    const whileReading = await new Promise<{ status: number | undefined; openFiles: number }>((resolve, reject) => {
      const request = get(`${api.url}${fileOf(id)}`, { headers: { 'X-API-Key': key } }, (response) => {
        response.once('data', () => {
          response.pause();
          // The client takes no more: the transfer waits for it with the file open.
          const seen = { status: response.statusCode, openFiles: openOnFile() };
          request.destroy();
          resolve(seen);
        });
      });
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
    });
    expect(whileReading).toEqual({ status: 200, openFiles: 1 });
    await expect.poll(openOnFile, { timeout: 10_000 }).toBe(0);
  });
});

describe('the OpenAPI document of the file route', () => {
  it('declares the bytes by media type, the range and conditional answers and the headers they read', () => {
    const operation = (buildOpenApi(allRoutes, 'test') as unknown as { paths: Record<string, any> }).paths['/api/videos/{videoId}/file']
      .get;
    for (const status of ['200', '206'])
      expect(Object.keys(operation.responses[status].content)).toEqual(
        expect.arrayContaining([
          'video/mp4',
          'video/webm',
          'video/x-matroska',
          'audio/mp4',
          'audio/mpeg',
          'audio/ogg',
          'application/octet-stream',
        ]),
      );
    expect(operation.responses['200'].content['video/mp4']).toEqual({});
    expect(operation.responses['206'].headers['Content-Range']).toBeDefined();
    expect(operation.responses['304'].content).toBeUndefined();
    expect(operation.responses['416'].headers['Content-Range'].description).toBe('bytes */size');
    expect(Object.keys(operation.responses['416'].content)).toEqual(['application/json']);
    for (const status of ['404', '412']) expect(operation.responses[status]).toBeDefined();
    const headers = operation.parameters
      .filter((parameter: { in: string }) => parameter.in === 'header')
      .map((parameter: { name: string }) => parameter.name);
    expect(headers).toEqual(['Range', 'If-Range', 'If-None-Match', 'If-Modified-Since', 'If-Match', 'If-Unmodified-Since']);
  });
});

describe('parseRange', () => {
  it.each([
    [undefined, 'whole'],
    ['bytes=0-0', { start: 0, end: 0 }],
    ['BYTES = 5-', { start: 5, end: 9 }],
    ['bytes=0-4, ', { start: 0, end: 4 }],
    ['bytes=0-4,6-7', 'whole'],
    ['bytes=10-', 'unsatisfiable'],
    ['bytes=-20', { start: 0, end: 9 }],
    ['bytes=-0', 'unsatisfiable'],
    ['bytes=99999999999999999999999-', 'unsatisfiable'],
    ['bytes=3-1', 'whole'],
    ['bytes=1-2-3', 'whole'],
  ] as const)('reads %s for a 10-byte file as %j', (header, expected) => {
    expect(parseRange(header, 10)).toEqual(expected);
  });
});

describe('mediaType', () => {
  it.each([
    ['/a/b.mp4', 'video/mp4'],
    ['/a/b.WEBM', 'video/webm'],
    ['/a/b.mkv', 'video/x-matroska'],
    ['/a/b.m4a', 'audio/mp4'],
    ['/a/b.mp3', 'audio/mpeg'],
    ['/a/b.opus', 'audio/ogg'],
    ['/a/b.ogg', 'audio/ogg'],
    ['/a/b.part', 'application/octet-stream'],
  ])('%s is %s', (path, type) => expect(mediaType(path)).toBe(type));
});
