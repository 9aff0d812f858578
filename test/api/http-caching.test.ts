import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymousSubject } from '../../api/http/guard.ts';
import { isCompressible, negotiateCoding, API_CALLER_HEADERS, cachingHeaders, privateByDefault } from '../../api/http/representation.ts';
import { privateCache } from '../../api/http/route.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { expectConformingResponses } from '../support/conformanceProblems.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { awaitFreshWindow, rawRequest, type RawRequestOptions } from '../support/http-helpers.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let api: TestApi;
let key: string;
let userId: string;
const channelId = channelIdFor('caching');
const v = { long: videoIdFor('cache-long'), summarised: videoIdFor('cache-summarised') };
const LINES = Array.from({ length: 120 }, (_, i) => `Line ${i} of a long talk about lathes, bearings and the patience they need.`);

/** One request as a client that decodes nothing itself, to this API. */
const raw = (path: string, options: RawRequestOptions = {}) => rawRequest(`${api.url}${path}`, options);

const used = async (subject: string, limit: string) =>
  (
    await db.sql<
      { used: number }[]
    >`select coalesce(sum(used), 0)::int as used from usage_counters where subject = ${subject}::uuid and limit_name = ${limit}`
  )[0]!.used;

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { subtitleDownloadsPerDay: 1000, requestsPerMinute: 1000 } });
  api = await startTestApi(db.sql);
  const created = await createKeyedUser(db.sql);
  ({ key } = created);
  userId = created.user.id;
  await addVideos(db.sql, channelId, [
    { videoId: v.long, title: 'A long talk' },
    { videoId: v.summarised, title: 'A summarised talk' },
  ]);
  await addTrack(db.sql, { videoId: v.long, language: 'en', kind: 'manual', text: vttOf(LINES) });
  await db.sql`
    insert into summaries (video_id, channel_id, status, title, tldr, key_points, detailed_summary, tags, language, llm_model, generated_at)
    values (${v.summarised}, ${channelId}, 'generated', 'Lathes', 'How a lathe is restored.', ${db.sql.json([{ text: 'The bed is cleaned', startSeconds: 12 }])},
      ${'A long account of the restoration. '.repeat(60)}, '{lathe,workshop}', 'en', 'afterimage-extractive-1', '2026-11-01T10:00:00Z')`;
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

describe('conditional requests', () => {
  it('a subtitle download sends a strong ETag per format; If-None-Match answers 304 with no body and counts neither the download nor the request', async () => {
    await awaitFreshWindow(db.sql);
    const first = await raw(`/api/subtitles/${v.long}?format=vtt`, { headers: { 'X-API-Key': key } });
    expect(first.status).toBe(200);
    const etag = first.headers.etag!;
    expect(etag).toMatch(/^"[^"]+\.vtt"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    expect(first.headers.vary).toBe('Origin, X-API-Key, Authorization, Accept-Encoding');
    const srt = await raw(`/api/subtitles/${v.long}?format=srt`, { headers: { 'X-API-Key': key } });
    expect(srt.headers.etag).not.toBe(etag);
    const [downloads, requests] = [await used(userId, 'subtitleDownloadsPerDay'), await used(userId, 'requestsPerMinute')];
    const again = await raw(`/api/subtitles/${v.long}?format=vtt`, { headers: { 'X-API-Key': key, 'If-None-Match': `"other", ${etag}` } });
    expect(again.status).toBe(304);
    expect(again.raw.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['ratelimit-remaining']).toBeUndefined();
    expect(await used(userId, 'subtitleDownloadsPerDay')).toBe(downloads);
    expect(await used(userId, 'requestsPerMinute')).toBe(requests);
    const changed = await raw(`/api/subtitles/${v.long}?format=vtt`, { headers: { 'X-API-Key': key, 'If-None-Match': '"stale"' } });
    expect(changed.status).toBe(200);
    expect(changed.text).toBe(first.text);
    expect(await used(userId, 'subtitleDownloadsPerDay')).toBe(downloads + 1);
  });

  it.each([
    ['the status history', () => `/api/videos/${v.long}/status-history`],
    ['a summary', () => `/api/summary/${v.summarised}`],
    ['the list of summaries', () => '/api/summary/browse'],
    ['the subtitle status', () => `/api/subtitles/${v.long}/status`],
  ])('%s: private ETag, If-None-Match → 304 counting nothing', async (_, path) => {
    await awaitFreshWindow(db.sql);
    const first = await raw(path(), { headers: { 'X-API-Key': key } });
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{24}"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    expect(first.headers.vary).toContain('X-API-Key, Authorization');
    const requests = await used(userId, 'requestsPerMinute');
    const again = await raw(path(), { headers: { 'X-API-Key': key, 'If-None-Match': first.headers.etag! } });
    expect(again.status).toBe(304);
    expect(again.raw.length).toBe(0);
    expect(await used(userId, 'requestsPerMinute')).toBe(requests);
    expectConformingResponses();
  });

  it('a summary changed since answers 200 with another ETag', async () => {
    const first = await raw(`/api/summary/${v.summarised}`, { headers: { 'X-API-Key': key } });
    await db.sql`update summaries set tldr = 'How a lathe is restored, again.' where video_id = ${v.summarised}`;
    const again = await raw(`/api/summary/${v.summarised}`, { headers: { 'X-API-Key': key, 'If-None-Match': first.headers.etag! } });
    expect(again.status).toBe(200);
    expect(again.headers.etag).not.toBe(first.headers.etag);
    await db.sql`update summaries set tldr = 'How a lathe is restored.' where video_id = ${v.summarised}`;
  });

  it('the tiers and the OpenAPI document are public, kept a while, and revalidated with a 304', async () => {
    for (const [path, maxAge] of [
      ['/api/tiers', 60],
      ['/api/openapi.json', 3600],
    ] as const) {
      const first = await raw(path);
      expect(first.headers['cache-control']).toBe(`public, max-age=${maxAge}`);
      expect(first.headers.vary).toBe('Origin, Accept-Encoding');
      const again = await raw(path, { headers: { 'If-None-Match': `W/${first.headers.etag}` } });
      expect(again.status).toBe(304);
      expect(again.headers['cache-control']).toBe(`public, max-age=${maxAge}`);
    }
  });

  it("Vary keeps what another layer set (CORS's Origin); Cache-Control goes only with the answer", () => {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    res.setHeader('Vary', 'Origin, accept-encoding');
    privateByDefault(res, API_CALLER_HEADERS);
    expect(cachingHeaders(res, privateCache, true)).toEqual({ 'Cache-Control': 'private, no-cache' });
    expect(res.getHeader('Vary')).toBe('Origin, accept-encoding, X-API-Key, Authorization');
    // What stands for an answer that says nothing of its own (an error replacing this one).
    expect(res.getHeader('Cache-Control')).toBe('private, no-store');
  });

  it('If-Match naming another version is 412 in the error envelope', async () => {
    const answer = await raw('/api/tiers', { headers: { 'If-Match': '"not-this-one"' } });
    expect(answer.status).toBe(412);
    expect(JSON.parse(answer.text).error.code).toBe('INVALID_INPUT');
  });
});

describe('compression', () => {
  it('negotiates br or gzip by Accept-Encoding: q-values, *, identity, refusals', () => {
    expect(negotiateCoding(undefined)).toBe('identity');
    expect(negotiateCoding('')).toBe('identity');
    expect(negotiateCoding('gzip, deflate, br')).toBe('br');
    expect(negotiateCoding('gzip, br;q=0.5')).toBe('gzip');
    expect(negotiateCoding('br;q=0, gzip;q=0.1')).toBe('gzip');
    expect(negotiateCoding('*')).toBe('br');
    expect(negotiateCoding('*;q=0.2, br;q=0')).toBe('gzip');
    expect(negotiateCoding('identity')).toBe('identity');
    expect(negotiateCoding('gzip;q=0, br;q=0, identity;q=0')).toBe('identity');
    expect(negotiateCoding('deflate, x-gzip')).toBe('gzip');
    expect(negotiateCoding(['gzip', 'BR'])).toBe('br');
  });

  it('codes text media types, never media files, zips or event streams', () => {
    for (const type of [
      'application/json; charset=utf-8',
      'text/html; charset=utf-8',
      'application/xml',
      'text/vtt',
      'application/x-subrip',
      'text/markdown',
      'application/problem+json',
    ])
      expect(isCompressible(type)).toBe(true);
    for (const type of ['video/mp4', 'audio/webm', 'application/zip', 'text/event-stream', 'application/octet-stream'])
      expect(isCompressible(type)).toBe(false);
  });

  it('the OpenAPI document in br and gzip decodes to the same document, each coding with its own ETag', async () => {
    const plain = await raw('/api/openapi.json');
    expect(plain.headers['content-encoding']).toBeUndefined();
    for (const coding of ['br', 'gzip']) {
      const coded = await raw('/api/openapi.json', { headers: { 'Accept-Encoding': coding } });
      expect(coded.headers['content-encoding']).toBe(coding);
      expect(coded.text).toBe(plain.text);
      expect(Number(coded.headers['content-length'])).toBe(coded.raw.length);
      expect(coded.raw.length).toBeLessThan(plain.raw.length / 4);
      expect(coded.headers.etag).toBe(`${plain.headers.etag!.slice(0, -1)}-${coding}"`);
      // Each representation revalidates with its own tag.
      expect(
        (await raw('/api/openapi.json', { headers: { 'Accept-Encoding': coding, 'If-None-Match': coded.headers.etag! } })).status,
      ).toBe(304);
      expect(
        (await raw('/api/openapi.json', { headers: { 'Accept-Encoding': coding, 'If-None-Match': plain.headers.etag! } })).status,
      ).toBe(200);
    }
  });

  it('subtitles are coded; a body under 1 KiB is sent as is', async () => {
    const coded = await raw(`/api/subtitles/${v.long}?format=srt`, { headers: { 'X-API-Key': key, 'Accept-Encoding': 'gzip' } });
    expect(coded.headers['content-encoding']).toBe('gzip');
    expect(coded.text).toContain('Line 119 of a long talk');
    const small = await raw(`/api/summary/languages`, { headers: { 'X-API-Key': key, 'Accept-Encoding': 'br' } });
    expect(small.raw.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toContain('Accept-Encoding');
  });

  it('the bulk JSON is streamed through the coder', async () => {
    const body = JSON.stringify({ videoIds: [v.long], format: 'vtt' });
    const coded = await raw('/api/subtitles/bulk-download', {
      method: 'POST',
      body,
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Accept-Encoding': 'br' },
    });
    expect(coded.status).toBe(200);
    expect(coded.headers['content-encoding']).toBe('br');
    expect(JSON.parse(coded.text).data.videos[0].text).toContain('Line 119');
    const zip = await raw('/api/subtitles/bulk-download', {
      method: 'POST',
      body: JSON.stringify({ videoIds: [v.long], format: 'zip' }),
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Accept-Encoding': 'br' },
    });
    expect(zip.headers['content-type']).toBe('application/zip');
    expect(zip.headers['content-encoding']).toBeUndefined();
  });

  it('an event stream is never coded', async () => {
    const stream = await raw(`/api/summary/${v.summarised}/stream`, { headers: { 'X-API-Key': key, 'Accept-Encoding': 'gzip, br' } });
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['content-encoding']).toBeUndefined();
    expect(stream.text).toContain('summary:complete');
  });
});

describe('crawlers', () => {
  const crawler = '127.0.0.77';

  it('sitemaps and summary pages have a budget of their own, far above the 30 API requests a minute of the anonymous tier', async () => {
    await awaitFreshWindow(db.sql, 60, 10);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => raw(i % 2 ? '/sitemap.xml' : `/summaries/${v.summarised}`, { localAddress: crawler })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200));
    expect(answers[0]!.headers['ratelimit-policy']).toBe('600;w=60');
    const subject = anonymousSubject(crawler);
    expect(await used(subject, 'pageRequestsPerMinute')).toBe(40);
    expect(await used(subject, 'requestsPerMinute')).toBe(0);
    // The API's own budget is still whole.
    const api = await raw('/api/tiers', { localAddress: crawler });
    expect(api.headers['ratelimit-remaining']).toBe('29');
  });

  it('a 429 of a public page is not marked cacheable', async () => {
    const address = '127.0.0.79';
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'anonymous', { limits: { pageRequestsPerMinute: 1 } });
    try {
      expect((await raw('/sitemap.xml', { localAddress: address })).status).toBe(200);
      const refused = await raw('/sitemap.xml', { localAddress: address });
      expect(refused.status).toBe(429);
      expect(refused.headers['cache-control']).toBe('private, no-store');
    } finally {
      await updateTier(db.sql, 'anonymous', { limits: { pageRequestsPerMinute: 600 } });
    }
  });

  it('a sitemap revalidates with If-None-Match, a summary page with If-Modified-Since too; 304s count nothing', async () => {
    const address = '127.0.0.78';
    const sitemap = await raw('/sitemap.xml', { localAddress: address, headers: { 'Accept-Encoding': 'gzip' } });
    expect(sitemap.headers['cache-control']).toBe('public, max-age=300');
    expect(sitemap.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(sitemap.text).toContain(`/summaries/${v.summarised}</loc>`);
    const page = await raw(`/summaries/${v.summarised}`, { localAddress: address });
    expect(page.headers['last-modified']).toBe(new Date('2026-11-01T10:00:00Z').toUTCString());
    const subject = anonymousSubject(address);
    const counted = await used(subject, 'pageRequestsPerMinute');
    const revalidated = [
      await raw('/sitemap.xml', { localAddress: address, headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': sitemap.headers.etag! } }),
      await raw(`/summaries/${v.summarised}`, { localAddress: address, headers: { 'If-None-Match': page.headers.etag! } }),
      await raw(`/summaries/${v.summarised}`, { localAddress: address, headers: { 'If-Modified-Since': page.headers['last-modified']! } }),
    ];
    expect(revalidated.map((answer) => answer.status)).toEqual([304, 304, 304]);
    expect(await used(subject, 'pageRequestsPerMinute')).toBe(counted);
    const older = await raw(`/summaries/${v.summarised}`, {
      localAddress: address,
      headers: { 'If-Modified-Since': new Date('2026-10-01T00:00:00Z').toUTCString() },
    });
    expect(older.status).toBe(200);
  });
});
