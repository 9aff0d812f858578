/**
 * Finished streams stop a standard EventSource (the `eventsource` package, as browsers behave): a
 * reconnect that has nothing more to receive answers 204, so the client closes instead of
 * reconnecting every few seconds, for the search, summary and stenogram streams. Connections are
 * counted by a proxy in front of the API, as the server sees them.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let dataDir: string;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let proxy: Server;
let proxyUrl: string;
let key: string;
let userId: string;
/** Per path: the status of every request the API answered. */
const answered = new Map<string, number[]>();
const crawled = generateChannel(5, 'e');
const channelId = channelIdFor('eventsource');
const v = { summary: videoIdFor('es-summary'), stenogram: videoIdFor('es-steno') };
const LINES = ['>> Welcome to the bench.', 'Today we test the streams.', '>> Thanks, let us start.', 'The client should stop.'];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-eventsource-'));
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, apiStenogramsPerDay: 100 } });
  stack = await startSearchStack(
    db,
    { DATA_DIR: dataDir },
    {
      sources: [fakeSource({ name: 'youtube_api', channel: crawled.channel, videos: crawled.videos })],
    },
  );
  const created = await createKeyedUser(db.sql);
  ({ key } = created);
  userId = created.user.id;
  await addVideos(db.sql, channelId, [
    { videoId: v.summary, title: 'Summarised' },
    { videoId: v.stenogram, title: 'Transcribed' },
  ]);
  for (const videoId of Object.values(v)) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(LINES, 4) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
  const target = new URL(stack.api.url);
  proxy = createServer((req, res) => {
    const path = req.url!.split('?')[0]!;
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        answered.set(path, [...(answered.get(path) ?? []), answer.statusCode!]);
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await stack?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const post = (path: string, body: unknown) =>
  stack.api.call(path, { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** Follows `path` with a real EventSource until it closes; answers the events it got (type and id) and its final readyState. */
async function followUntilClosed(path: string, finalTypes: string[]) {
  const received: Array<{ type: string; id: string }> = [];
  const source = new EventSource(`${proxyUrl}${path}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-API-Key': key } }),
  });
  for (const type of finalTypes) source.addEventListener(type, (event) => received.push({ type, id: event.lastEventId }));
  try {
    await eventually(async () => (source.readyState === EventSource.CLOSED ? true : undefined), `EventSource on ${path} closes`, 20_000);
  } finally {
    source.close();
  }
  return { received, readyState: source.readyState };
}

/** The stream closed for good: one connection that answered 200, the reconnect 204, and none after it. */
async function expectStoppedAfterOneReconnect(path: string) {
  expect(answered.get(path)).toEqual([200, 204]);
  // EventSource would reconnect after `retry: 3000`; nothing comes.
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  expect(answered.get(path)).toEqual([200, 204]);
}

// Concurrent: each test mostly waits out EventSource's 3 s retry and 4 s more, on its own stream.
describe.concurrent('a finished stream stops EventSource with 204', () => {
  it('search: after search:complete the reconnect gets 204 and the client closes', async () => {
    const started = await post('/api/search', { query: crawled.channel.channelId });
    expect(started.status).toBe(200);
    const path = started.body.data.sseEndpointUrl as string;
    const { received, readyState } = await followUntilClosed(path, ['search:complete']);
    expect(readyState).toBe(EventSource.CLOSED);
    expect(received).toEqual([{ type: 'search:complete', id: expect.stringMatching(/^c:\d+$/) }]);
    await expectStoppedAfterOneReconnect(path);
  }, 40_000);

  it('summary: a late first connection gets the final event once, with its id; the reconnect gets 204', async () => {
    expect((await post('/api/summary/generate', { videoId: v.summary })).status).toBe(202);
    await eventually(
      async () => ((await stack.api.call(`/api/summary/${v.summary}`, { key })).body.data.status === 'generated' ? true : undefined),
      'the summary is generated',
    );
    const path = `/api/summary/${v.summary}/stream`;
    const { received, readyState } = await followUntilClosed(path, ['summary:complete']);
    expect(readyState).toBe(EventSource.CLOSED);
    expect(received).toEqual([{ type: 'summary:complete', id: expect.stringMatching(/^\d+$/) }]);
    await expectStoppedAfterOneReconnect(path);
  }, 40_000);

  it('stenogram: the same after stenogram:complete', async () => {
    const generated = await readStream(`${stack.api.url}/api/stenograms/${v.stenogram}/generate`, {
      key,
      method: 'POST',
      timeoutMs: 20_000,
    });
    expect(generated.events.at(-1)?.event).toBe('stenogram:complete');
    const path = `/api/stenograms/@${userId}/${v.stenogram}/stream`;
    const { received, readyState } = await followUntilClosed(path, ['stenogram:complete']);
    expect(readyState).toBe(EventSource.CLOSED);
    expect(received).toEqual([{ type: 'stenogram:complete', id: generated.events.at(-1)!.id }]);
    await expectStoppedAfterOneReconnect(path);
  }, 40_000);
});

describe('what a finished generation stream answers', () => {
  it('a reconnect that missed the final event gets it; one after it gets 204; an id of no event of the stream 400', async () => {
    const url = `${stack.api.url}/api/summary/${v.summary}/stream`;
    // The other id is another stream's (the search's above): a fixed one such as 1 may be this stream's own.
    const [{ firstId, finalId, otherId }] = await db.sql<[{ firstId: string; finalId: string; otherId: string }]>`
      select min(e.id) filter (where e.stream = 'summary:' || s.id)::text as "firstId",
        max(e.id) filter (where e.stream = 'summary:' || s.id)::text as "finalId",
        min(e.id) filter (where e.stream <> 'summary:' || s.id)::text as "otherId"
      from events e cross join summaries s where s.video_id = ${v.summary}`;
    const missed = await readStream(url, { key, lastEventId: firstId });
    expect(missed.status).toBe(200);
    expect(missed.events).toMatchObject([{ event: 'summary:complete', id: finalId }]);
    expect((await readStream(url, { key, lastEventId: finalId })).status).toBe(204);
    expect(otherId).not.toBeNull();
    expect((await readStream(url, { key, lastEventId: otherId })).status).toBe(400);
  });
});
