import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { fetchText } from '../../core/sources/http.ts';
import { outboundPost, RefusedRequest } from '../../core/sources/outboundRequest.ts';
import { upstreamFor } from '../../core/sources/upstream.ts';
import { waybackCaptures } from '../../core/sources/wayback/captures.ts';
import { createYoutubeApiSource } from '../../core/sources/youtubeApi.ts';
import { watchPageProbe } from '../../core/status/probes.ts';
import { fetchSubtitles } from '../../core/subtitles/fetchSubtitles.ts';
import { youtubeSubtitleSource } from '../../core/subtitles/sources.ts';
import { startRecordingServer, type RecordingServer } from '../kit/servers/recording-server.ts';
import { playerResponse, watchPageHtml } from '../kit/servers/wayback-server.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, json3Of, videoIdFor } from '../support/subtitles.ts';

// Outbound requests reach only the configured upstream origins. Stand-in upstreams name a foreign
// host (another local server: a different origin, like any other host) in their content and
// redirect to it; the foreign server must receive nothing at all.

const channelId = channelIdFor('outbound');
const captioned = videoIdFor('outbound-captioned');
const redirected = videoIdFor('outbound-redirected');
const fast = { retries: 2, minDelayMs: 1, maxDelayMs: 5, timeoutMs: 3_000 };
const silent = createLogger('silent');

let db: TestDatabase;
let foreign: RecordingServer;
let web: RecordingServer;
let dataApi: RecordingServer;
let wayback: RecordingServer;

beforeAll(async () => {
  db = await createTestDatabase();
  foreign = await startRecordingServer();
  web = await startRecordingServer((url, res) => {
    const v = url.searchParams.get('v');
    if (url.pathname === '/watch' && v === redirected) return void res.writeHead(302, { Location: `${foreign.url}/watch?v=${v}` }).end();
    if (url.pathname === '/watch' && v === captioned) {
      const player = playerResponse({
        videoId: v,
        channelId,
        title: 'Captioned',
        captions: ['en', 'de', 'fr', 'es'].map((languageCode) => ({ languageCode })),
      });
      // The de track names the foreign host outright; the others are on www.youtube.com (read through the configured web URL).
      const tracks = (
        player.captions as { playerCaptionsTracklistRenderer: { captionTracks: Array<{ languageCode: string; baseUrl: string }> } }
      ).playerCaptionsTracklistRenderer.captionTracks;
      tracks.find((track) => track.languageCode === 'de')!.baseUrl = `${foreign.url}/api/timedtext?v=${v}&lang=de`;
      return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(watchPageHtml(player));
    }
    if (url.pathname === '/api/timedtext') {
      const lang = url.searchParams.get('lang');
      if (lang === 'fr') return void res.writeHead(302, { Location: `${foreign.url}/api/timedtext?lang=fr` }).end();
      if (lang === 'es') return void res.writeHead(503).end();
      return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(json3Of(['Only this track is read.']));
    }
    res.writeHead(404).end();
  });
  dataApi = await startRecordingServer(
    (url, res) => void res.writeHead(307, { Location: `${foreign.url}${url.pathname}${url.search}` }).end(),
  );
  wayback = await startRecordingServer((url, res) => {
    if (url.pathname === '/web/2020id_/http://example.org/')
      return void res.writeHead(302, { Location: '/web/2021id_/http://example.org/' }).end();
    if (url.pathname === '/web/2021id_/http://example.org/')
      return void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>captured</html>');
    if (url.pathname === '/web/2022id_/http://example.org/')
      return void res.writeHead(302, { Location: `${foreign.url}/web/2022id_/http://example.org/` }).end();
    if (url.pathname === '/big') return void res.writeHead(200, { 'Content-Type': 'text/plain' }).end('x'.repeat(4096));
    if (url.pathname === '/bomb')
      return void res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' }).end(gzipSync(Buffer.alloc(1024 * 1024)));
    res.writeHead(404).end();
  });
  await addVideos(db.sql, channelId, [{ videoId: captioned }, { videoId: redirected }]);
});

afterAll(async () => {
  await Promise.all([foreign, web, dataApi, wayback].map((server) => server?.close()));
  await db?.drop();
});

describe('caption tracks', () => {
  it('refuses a track on another host and a track redirected to one, and keeps the others when one is unreachable', async () => {
    const source = youtubeSubtitleSource({ webUrl: web.url, fetchOptions: fast });
    const report = await fetchSubtitles(db.sql, [source], captioned, { log: silent, finalAttempt: true });
    expect(report!.stored.map((track) => track.language)).toEqual(['en']);
    const problems = report!.problems.map(({ message, transient }) => ({
      language: message.slice(0, 2),
      transient,
      refused: message.includes(`refused a request to ${foreign.url}`),
    }));
    expect(problems.sort((a, b) => a.language.localeCompare(b.language))).toEqual([
      { language: 'de', transient: false, refused: true },
      { language: 'es', transient: true, refused: false },
      { language: 'fr', transient: false, refused: true },
    ]);
    expect(web.requests.filter((path) => path.startsWith('/api/timedtext') && path.includes('lang=fr'))).toHaveLength(1); // a refusal is not retried
    expect(foreign.requests).toEqual([]);
  });

  it('takes a watch page that redirects to another host as a failure of the source, not as "no tracks"', async () => {
    const source = youtubeSubtitleSource({ webUrl: web.url, fetchOptions: fast });
    const report = await fetchSubtitles(db.sql, [source], redirected, { log: silent, finalAttempt: true });
    expect(report!.problems).toEqual([
      {
        source: 'youtube',
        transient: false,
        message: expect.stringContaining(
          `refused a request to ${foreign.url}: not an origin of the configured youtube_web upstream (${web.url})`,
        ),
      },
    ]);
    expect(foreign.requests).toEqual([]);
  });
});

describe('redirects', () => {
  it('refuses a Data API redirect to another host, once, without retrying', async () => {
    const before = dataApi.requests.length;
    const source = createYoutubeApiSource({ apiKey: 'secret-key', baseUrl: `${dataApi.url}/youtube/v3`, fetchOptions: fast });
    const failure = await source.resolveChannel({ kind: 'channelId', channelId }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RefusedRequest);
    expect((failure as Error).message).not.toContain('secret-key');
    expect(dataApi.requests.length - before).toBe(1);
    expect(foreign.requests).toEqual([]);
  });

  it('follows a redirect within the Wayback origin and refuses one off it', async () => {
    const captures = waybackCaptures({
      cdxUrl: `${wayback.url}/cdx/search/cdx`,
      captureBase: `${wayback.url}/web`,
      publicBase: 'https://web.archive.org/web',
      fetchOptions: fast,
    });
    const row = (timestamp: string) => ({
      timestamp,
      original: 'http://example.org/',
      urlkey: 'org,example)/',
      statuscode: '200',
      mimetype: 'text/html',
      digest: 'X',
      length: '1',
    });
    await expect(captures.readCapture(row('2020'), undefined)).resolves.toBe('<html>captured</html>');
    // Refused like a capture that cannot be replayed: stepped over.
    await expect(captures.readCapture(row('2022'), undefined)).resolves.toBeUndefined();
    expect(foreign.requests).toEqual([]);
  });

  it('gives the status probe a transient observation with the refusal as evidence', async () => {
    const [observation] = await watchPageProbe({ webUrl: web.url, fetchOptions: fast })([redirected]);
    expect(observation).toMatchObject({
      videoId: redirected,
      outcome: 'transient',
      evidence: expect.stringContaining(`refused a request to ${foreign.url}`),
    });
    expect(foreign.requests).toEqual([]);
  });
});

describe('addresses and sizes', () => {
  it("refuses the platform's public host name when it resolves to a loopback address", async () => {
    const port = new URL(web.url).port;
    const before = web.requests.length;
    const toLoopback = (
      _host: string,
      _options: unknown,
      callback: (error: null, addresses: Array<{ address: string; family: number }>) => void,
    ) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const upstream = upstreamFor('youtube_web', [`http://www.youtube.com:${port}`], toLoopback);
    await expect(fetchText(upstream, `http://www.youtube.com:${port}/watch?v=${captioned}`, fast)).rejects.toThrow(
      `refused a request to http://www.youtube.com:${port}: www.youtube.com resolves to 127.0.0.1, not a public address`,
    );
    expect(web.requests.length).toBe(before);
  });

  it('allows a configured loopback upstream on its own port only', async () => {
    const upstream = upstreamFor('youtube_web', [web.url]);
    await expect(fetchText(upstream, `${web.url}/api/timedtext?lang=en&fmt=json3`, fast)).resolves.toMatchObject({ status: 200 });
    await expect(fetchText(upstream, `${foreign.url}/`, fast)).rejects.toBeInstanceOf(RefusedRequest);
    expect(foreign.requests).toEqual([]);
  });

  it('refuses an answer larger than the cap, compressed or not', async () => {
    const upstream = upstreamFor('wayback', [wayback.url]);
    await expect(fetchText(upstream, `${wayback.url}/big`, { ...fast, maxBytes: 4096 })).resolves.toMatchObject({ status: 200 });
    await expect(fetchText(upstream, `${wayback.url}/big`, { ...fast, maxBytes: 4095 })).rejects.toThrow(
      'the answer is larger than 4095 bytes',
    );
    await expect(fetchText(upstream, `${wayback.url}/bomb`, { ...fast, maxBytes: 64 * 1024 })).rejects.toThrow(
      'the answer is larger than 65536 bytes',
    );
  });
});

describe('one POST (webhook receivers, the time-stamping authority)', () => {
  const post = (url: string, options: Partial<Parameters<typeof outboundPost>[1]> = {}) =>
    outboundPost(new URL(url), { headers: {}, body: 'ping', signal: AbortSignal.timeout(3_000), maxBytes: 1024, ...options });
  const toLoopback = (
    _host: string,
    _options: unknown,
    callback: (error: null, addresses: Array<{ address: string; family: number }>) => void,
  ) => callback(null, [{ address: '127.0.0.1', family: 4 }]);

  it('posts once and answers the status and body; never follows a redirect, to another host or any', async () => {
    let received = '';
    const receiver = await startRecordingServer((url, res, req) => {
      req.on('data', (chunk: Buffer) => {
        received += chunk.toString();
      });
      req.on('end', () => {
        if (url.pathname === '/moved') return void res.writeHead(307, { Location: `${foreign.url}/elsewhere` }).end();
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('got it');
      });
    });
    try {
      const answer = await post(`${receiver.url}/hook`);
      expect(answer).toMatchObject({ status: 200 });
      expect(answer.body?.toString()).toBe('got it');
      expect(received).toBe('ping');
      expect(await post(`${receiver.url}/moved`)).toMatchObject({ status: 307, location: `${foreign.url}/elsewhere` });
      expect(foreign.requests).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('refuses private addresses only when asked to: an address in the URL, or a name resolving to one at connect time', async () => {
    const before = web.requests.length;
    await expect(post(`${web.url}/hook`, { publicOnly: toLoopback })).rejects.toThrow('127.0.0.1 is not a public address');
    const port = new URL(web.url).port;
    await expect(post(`http://receiver.example:${port}/hook`, { publicOnly: toLoopback })).rejects.toThrow(
      'receiver.example resolves to 127.0.0.1, not a public address',
    );
    expect(web.requests.length).toBe(before);
    // The operator's own URL (no refusal asked for) may be any address.
    expect((await post(`${web.url}/hook`)).status).toBeGreaterThan(0);
  });

  it('reads the answer up to the cap: a larger one has its status and no body', async () => {
    const answer = await post(`${wayback.url}/big`, { maxBytes: 4095 });
    expect(answer).toMatchObject({ status: 200, body: undefined });
    expect((await post(`${wayback.url}/big`, { maxBytes: 4096 })).body).toHaveLength(4096);
  });
});
