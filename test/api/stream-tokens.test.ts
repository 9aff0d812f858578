import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createLogger } from '../../core/log.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { startWorker, type WorkerHandle } from '../../pipeline/worker.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { browserFetch } from '../support/crossOriginFetch.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { readStream } from '../support/sse.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

/** The page's origin, as a browser sends it. */
const APP = 'https://app.example.org';

let db: TestDatabase;
let api: TestApi;
let worker: WorkerHandle;
let dataDir: string;
let user: { key: string; userId: string };
const logLines: string[] = [];
/** Every token the API handed out in this file: none may ever reach a log line. */
const issued: string[] = [];
/** The headers of every request the EventSources sent. */
const sent: Headers[] = [];

const channel = generateChannel(120);
const other = generateChannel(3);
const summaryVideo = videoIdFor('token-summary');
const stenogramVideo = videoIdFor('token-stenogram');
const LINES = [
  'Host: Welcome back to the workshop, today we fix an old radio.',
  'Guest: Thanks for having me, I brought the valve tester.',
  'Host: The radio hums loudly when it warms up.',
  'Guest: That hum usually means the filter capacitors are dry.',
  'Host: So we replace the capacitors first and test it again.',
  'Guest: Exactly, and we check the rectifier valve while we are at it.',
];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-stream-tokens-'));
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, apiStenogramsPerDay: 100 } });
  const log = createLogger('debug', {}, (line) => void logLines.push(line));
  const sources = [
    fakeSource({ name: 'archive', channel: channel.channel, videos: channel.videos, pageSize: 50 }),
    fakeSource({ name: 'archive', channel: other.channel, videos: other.videos }),
  ];
  const bothChannels = {
    name: 'archive' as const,
    resolveChannel: async (query: Parameters<(typeof sources)[0]['resolveChannel']>[0]) =>
      (await sources[0]!.resolveChannel(query)) ?? sources[1]!.resolveChannel(query),
    listVideos: (found: typeof channel.channel, cursor?: string) =>
      (found.channelId === channel.channel.channelId ? sources[0]! : sources[1]!).listVideos(found, cursor),
  };
  api = await startTestApi(db.sql, { CORS_ORIGINS: APP, DATA_DIR: dataDir }, log, { sources: [bothChannels] });
  worker = await startWorker(api.config, { sql: db.sql, url: db.url, embedded: false, close: async () => {} }, log, api.services);
  const created = await createKeyedUser(db.sql);
  user = { key: created.key, userId: created.user.id };
  await addVideos(
    db.sql,
    channelIdFor('tokens'),
    [
      { videoId: summaryVideo, title: 'Fixing a radio' },
      { videoId: stenogramVideo, title: 'Fixing a radio, again' },
    ],
    'Workshop',
  );
  for (const videoId of [summaryVideo, stenogramVideo]) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(LINES, 4) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
});

afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const pageFetch = browserFetch(APP);
/** fetch as a page on APP makes it (test/support/browser.ts), recording what it sends. */
const recordingFetch = (input: string | URL | Request, init?: RequestInit) => {
  sent.push(new Headers(init?.headers));
  return pageFetch(input, init);
};

interface Followed {
  events: Array<{ type: string; data: any }>;
  failure?: { code: number | undefined; message: string | undefined };
}

/** A browser's EventSource on `path` (no headers of its own), until one of `finalTypes` arrives or the connection fails for good. */
function follow(path: string, types: string[], finalTypes: string[]): Promise<Followed> {
  return new Promise((resolve, reject) => {
    const source = new EventSource(`${api.url}${path}`, { fetch: recordingFetch });
    const events: Followed['events'] = [];
    const done = (result: Followed) => {
      clearTimeout(timer);
      source.close();
      resolve(result);
    };
    const timer = setTimeout(() => {
      source.close();
      reject(new Error(`no final event on ${path} within 30 s; received ${events.map((event) => event.type).join(', ') || 'nothing'}`));
    }, 30_000);
    for (const type of types) {
      source.addEventListener(type, (event) => {
        events.push({ type, data: JSON.parse(event.data) });
        if (finalTypes.includes(type)) done({ events });
      });
    }
    source.addEventListener('error', (error) => {
      if (source.readyState === EventSource.CLOSED) done({ events, failure: { code: error.code, message: error.message } });
    });
  });
}

const post = (path: string, body: unknown, key = user.key) =>
  api.call(path, { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function startSearch(query: string, key = user.key) {
  const started = await post('/api/search', { query }, key);
  expect(started.status).toBe(200);
  issued.push(started.body.data.sseToken.token);
  return started.body.data as {
    searchSessionId: string;
    sseEndpointUrl: string;
    sseToken: { token: string; url: string; expiresAt: string };
  };
}

/** A request from APP's page, read as the page may read it (refused like a browser refuses it without the grant). */
const fromPage = (path: string, init: RequestInit = {}) => pageFetch(`${api.url}${path}`, init);

describe('a browser EventSource follows a stream with a stream token instead of the API key', () => {
  it('a search: POST /api/search answers sseToken; the EventSource with only its URL receives the whole stream', async () => {
    const before = Date.now();
    const session = await startSearch(channel.channel.channelId);
    // The spec's field is untouched; the token comes beside it.
    expect(session.sseEndpointUrl).toBe(`/api/search/${session.searchSessionId}/stream`);
    expect(session.sseToken.token).toMatch(/^sst_[A-Za-z0-9_-]{43}$/);
    expect(session.sseToken.url).toBe(`${session.sseEndpointUrl}?token=${session.sseToken.token}`);
    const lifetime = Date.parse(session.sseToken.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(9 * 60_000);
    expect(lifetime).toBeLessThan(11 * 60_000);

    const sentBefore = sent.length;
    const followed = await follow(
      session.sseToken.url,
      ['search:channel_resolved', 'search:video', 'search:video_batch', 'search:complete', 'search:error'],
      ['search:complete', 'search:error'],
    );
    expect(followed.failure).toBeUndefined();
    expect(followed.events[0]!.type).toBe('search:channel_resolved');
    expect(followed.events.at(-1)!.type).toBe('search:complete');
    const videoIds = new Set(
      followed.events.flatMap((event) =>
        event.type === 'search:video'
          ? [event.data.videoId]
          : event.type === 'search:video_batch'
            ? event.data.videos.map((video: { videoId: string }) => video.videoId)
            : [],
      ),
    );
    expect(videoIds.size).toBe(channel.videos.length);
    // Sent as a browser sends it: no key in any header.
    for (const headers of sent.slice(sentBefore)) {
      expect(headers.get('x-api-key')).toBeNull();
      expect(headers.get('authorization')).toBeNull();
    }
  });

  it("only the token's hash is stored", async () => {
    const session = await startSearch(channel.channel.channelId);
    const hash = createHash('sha256').update(session.sseToken.token).digest();
    const rows = await db.sql`select * from stream_tokens`;
    expect(rows.filter((row) => Buffer.from(row.token_hash).equals(hash))).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(session.sseToken.token.slice(4));
    expect(rows.every((row) => row.stream_path.startsWith('/api/') && !row.stream_path.includes('?'))).toBe(true);
  });

  it("a token-opened stream is charged to the key's owner, as the key would be", async () => {
    const session = await startSearch(other.channel.channelId);
    const remaining = async (response: Response) => {
      await response.body?.cancel();
      return Number(response.headers.get('ratelimit-remaining'));
    };
    const byKey = await remaining(
      await fetch(`${api.url}/api/search/background-status/${other.channel.channelId}`, { headers: { 'X-API-Key': user.key } }),
    );
    const byToken = await remaining(await fromPage(session.sseToken.url, { headers: { Accept: 'text/event-stream' } }));
    const byKeyAgain = await remaining(
      await fetch(`${api.url}/api/search/background-status/${other.channel.channelId}`, { headers: { 'X-API-Key': user.key } }),
    );
    expect(byToken).toBe(byKey - 1);
    expect(byKeyAgain).toBe(byToken - 1);
  });

  it('a summary: the 202 of POST /api/summary/generate answers streamToken; the EventSource receives summary:complete', async () => {
    const accepted = await post('/api/summary/generate', { videoId: summaryVideo });
    expect(accepted.status).toBe(202);
    const { streamUrl, streamToken } = accepted.body.data;
    issued.push(streamToken.token);
    expect(streamToken.url).toBe(`${streamUrl}?token=${streamToken.token}`);
    const followed = await follow(
      streamToken.url,
      ['summary:progress', 'summary:complete', 'summary:error'],
      ['summary:complete', 'summary:error'],
    );
    expect(followed.failure).toBeUndefined();
    expect(followed.events.at(-1)).toMatchObject({
      type: 'summary:complete',
      data: { summary: { videoId: summaryVideo, status: 'generated' } },
    });
  });

  it('a stenogram: POST /api/stream-tokens mints one for its stream; the EventSource receives stenogram:complete with the Markdown', async () => {
    const generated = await readStream(`${api.url}/api/stenograms/${stenogramVideo}/generate`, {
      key: user.key,
      method: 'POST',
      timeoutMs: 30_000,
    });
    expect(generated.events.at(-1)?.event).toBe('stenogram:complete');
    const stream = `/api/stenograms/@${user.userId}/${stenogramVideo}/stream`;
    const minted = await post('/api/stream-tokens', { stream });
    expect(minted.status).toBe(201);
    issued.push(minted.body.data.token);
    expect(minted.body.data.url).toBe(`${stream}?token=${minted.body.data.token}`);
    const followed = await follow(
      minted.body.data.url,
      ['stenogram:progress', 'stenogram:complete', 'stenogram:error'],
      ['stenogram:complete', 'stenogram:error'],
    );
    expect(followed.failure).toBeUndefined();
    expect(followed.events.at(-1)!.type).toBe('stenogram:complete');
    expect(followed.events.at(-1)!.data.stenogram.markdown).toContain('capacitors');
  });

  it('POST /api/stream-tokens refuses anything but the path of an event stream', async () => {
    for (const stream of ['/api/fts', `/api/summary/${summaryVideo}`, `/api/search/${crypto.randomUUID()}/stream?x=1`, '/mcp']) {
      const refused = await post('/api/stream-tokens', { stream });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain('/api/search/:sessionId/stream');
    }
  });
});

describe('stream tokens refused: 401 in the error envelope, readable by the page, the token never echoed', () => {
  async function refusal(path: string, init: RequestInit = {}) {
    const response = await fromPage(path, { ...init, headers: { Accept: 'text/event-stream', ...init.headers } });
    const body = await response.json();
    for (const token of issued) expect(JSON.stringify(body)).not.toContain(token);
    return { status: response.status, error: body.error as { code: string; message: string } };
  }

  it('an EventSource without a token (or the key) is refused, and stops', async () => {
    const followed = await follow(`/api/search/${crypto.randomUUID()}/stream`, ['search:complete'], ['search:complete']);
    expect(followed.failure?.code).toBe(401);
  });

  it('a token used on another stream', async () => {
    const first = await startSearch(other.channel.channelId);
    const second = await startSearch(other.channel.channelId);
    const refused = await refusal(`${second.sseEndpointUrl}?token=${first.sseToken.token}`);
    expect(refused.status).toBe(401);
    expect(refused.error.code).toBe('UNAUTHORIZED');
    expect(refused.error.message).toContain(`opens ${first.sseEndpointUrl}, not ${second.sseEndpointUrl}`);
    expect(refused.error.message).toContain('POST /api/stream-tokens');
    const elsewhere = await refusal(`/api/summary/${summaryVideo}/stream?token=${first.sseToken.token}`);
    expect(elsewhere.status).toBe(401);
  });

  it('an expired token', async () => {
    const session = await startSearch(other.channel.channelId);
    await db.sql`update stream_tokens set created_at = now() - interval '11 minutes', expires_at = now() - interval '1 minute'
      where token_hash = ${createHash('sha256').update(session.sseToken.token).digest()}`;
    const refused = await refusal(session.sseToken.url);
    expect(refused.status).toBe(401);
    expect(refused.error.message).toMatch(/^this stream token expired at .* \(tokens last 10 minutes\); mint one/);
    const followed = await follow(session.sseToken.url, ['search:complete'], ['search:complete']);
    expect(followed.failure?.code).toBe(401);
  });

  it('an unknown or malformed token, and a token sent with a key', async () => {
    const session = await startSearch(other.channel.channelId);
    expect((await refusal(`${session.sseEndpointUrl}?token=sst_${'A'.repeat(43)}`)).error.message).toMatch(/^unknown stream token/);
    expect((await refusal(`${session.sseEndpointUrl}?token=abc`)).error.message).toMatch(/^malformed stream token/);
    const both = await refusal(session.sseToken.url, { headers: { 'X-API-Key': user.key } });
    expect(both.status).toBe(400);
    expect(both.error.message).toContain('not both');
  });

  it('a token whose key was revoked since', async () => {
    const created = await createKeyedUser(db.sql);
    const session = await startSearch(other.channel.channelId, created.key);
    await createApiKey(db.sql, { userId: created.user.id });
    const refused = await refusal(session.sseToken.url);
    expect(refused.status).toBe(401);
    expect(refused.error.message).toContain('the API key that minted this stream token was revoked');
  });

  it('no token ever reaches a log line, though the streams were logged', async () => {
    expect(issued.length).toBeGreaterThan(5);
    const logged = logLines.join('');
    expect(logged).toContain('"path":"/api/search/');
    for (const token of issued) {
      expect(logged).not.toContain(token);
      expect(logged).not.toContain(token.slice(4));
    }
  });
});
