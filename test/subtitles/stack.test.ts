import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchiveSource } from '../../core/sources/archive.ts';
import type { VideoRecord, VideoSource } from '../../core/sources/types.ts';
import { upsertChannel, upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createKeyedUser, type TestApi } from '../support/api.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource } from '../support/fake-source.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { channelIdFor, srtOf, videoIdFor, vttOf } from '../support/subtitles.ts';

// API and worker as `afterimage start` wires them: fetch jobs run on the worker, with the subtitle
// sources of the configuration (the local archive here).
let db: TestDatabase;
let api: TestApi;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let archive: ArchiveFixture;
let handmade: string;
let key: string;
let releaseGate: () => void = () => {};

const gatedChannel = { channelId: channelIdFor('stack-gated'), title: 'Gated Channel', handle: '@gatedsubs' };
const gatedVideos = [videoIdFor('stack-1'), videoIdFor('stack-2'), videoIdFor('stack-3')];

beforeAll(async () => {
  db = await createTestDatabase();
  archive = await createArchiveFixture({ videos: 12, legacyChannel: false });
  // A hand-made yt-dlp folder for the gated channel: info.json files with subtitle files beside them.
  handmade = await mkdtemp(join(tmpdir(), 'afterimage-stack-subs-'));
  const records: VideoRecord[] = [];
  for (const [i, videoId] of gatedVideos.entries()) {
    const base = join(handmade, `Episode ${i} [${videoId}]`);
    await writeFile(
      `${base}.info.json`,
      JSON.stringify({
        id: videoId,
        title: `Episode ${i}`,
        channel_id: gatedChannel.channelId,
        subtitles: { en: [{ ext: 'vtt' }] },
        automatic_captions: { fr: [{ ext: 'vtt' }] },
      }),
    );
    await writeFile(`${base}.en.vtt`, vttOf([`Episode ${i} begins.`, 'The lathe is running.']));
    await writeFile(`${base}.fr.srt`, srtOf([`épisode ${i}`]));
    records.push({
      videoId,
      channelId: gatedChannel.channelId,
      title: `Episode ${i}`,
      captions: [{ language: 'en', kind: 'manual' }],
      evidenceUrl: pathToFileURL(`${base}.info.json`).href,
      availability: 'live',
    });
  }
  // Already stored, so the stream's snapshot has them; the crawl stays running until the gate opens.
  await db.sql.begin(async (tx) => {
    await upsertChannel(tx, gatedChannel);
    await upsertVideos(tx, 'archive', records);
  });
  const gated = fakeSource({
    name: 'archive',
    channel: gatedChannel,
    videos: records,
    gate: new Promise<void>((resolve) => (releaseGate = resolve)),
  });
  const real = createArchiveSource({ dir: archive.dir });
  const combined: VideoSource = {
    name: 'archive',
    resolveChannel: async (query) => (await gated.resolveChannel(query)) ?? real.resolveChannel(query),
    listVideos: (channel, cursor) =>
      channel.channelId === gatedChannel.channelId ? gated.listVideos(channel, cursor) : real.listVideos(channel, cursor),
  };
  stack = await startSearchStack(db, { ARCHIVE_DIR: archive.dir, WORKER_CONCURRENCY: '2' }, { sources: [combined] });
  api = stack.api;
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  releaseGate();
  await stack?.close();
  await archive?.cleanup();
  if (handmade) await rm(handmade, { recursive: true, force: true });
  await db?.drop();
});

const post = (path: string, body?: unknown) =>
  api.call(path, {
    method: 'POST',
    key,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });

/**
 * Waits for the status `wanted`; for 'available', also for the transcript to be chosen: the status says
 * 'available' as soon as a track is stored, and the fetch still running may be the one that chooses it.
 */
async function waitForStatus(videoId: string, wanted: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api.call(`/api/subtitles/${videoId}/status`, { key });
    const data = response.body.data;
    if (data?.status === wanted && (wanted !== 'available' || data.transcript?.state !== 'pending')) return data;
    if (Date.now() > deadline) throw new Error(`status of ${videoId} stayed ${JSON.stringify(response.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('fetching on demand while a search stream is open', () => {
  it('answers 202, fetches in the background, and the open stream gets search:caption_info', async () => {
    const started = await post('/api/search', { query: gatedChannel.channelId });
    expect(started.status).toBe(200);
    const target = gatedVideos[1]!;
    let fetchAnswer: Promise<{ status: number; body: any }> | undefined;
    const isFetched = (event: ReceivedEvent) =>
      event.event === 'search:caption_info' &&
      event.data.videos.some((video: { videoId: string; hasSubtitles: boolean }) => video.videoId === target && video.hasSubtitles);
    const stream = readStream(`${api.url}${started.body.data.sseEndpointUrl}`, {
      key,
      timeoutMs: 20_000,
      until: (event) => {
        // Once the stored part is sent, ask for the subtitles: the answer must come live.
        if (event.event === 'search:progress' && event.data.stage === 'database') fetchAnswer = post(`/api/subtitles/${target}/fetch`);
        return isFetched(event);
      },
    });
    const { events } = await stream;
    const fetched = await fetchAnswer!;
    expect(fetched.status).toBe(202);
    expect(fetched.body.data).toMatchObject({ status: 'pending', videoId: target });
    const info = events.find(isFetched)!;
    expect(info.id).toMatch(/^c:/);
    expect(info.data.videos).toEqual([
      {
        videoId: target,
        hasSubtitles: true,
        captions: expect.arrayContaining([
          { language: 'en', kind: 'manual' },
          { language: 'fr', kind: 'auto' },
        ]),
      },
    ]);
    // The snapshot's caption summary was sent before, without subtitles.
    const snapshot = events.find((event) => event.event === 'search:caption_info' && !event.id);
    expect(snapshot?.data.videos.find((video: { videoId: string }) => video.videoId === target)).toMatchObject({ hasSubtitles: false });

    const status = await waitForStatus(target, 'available');
    expect(status.transcript).toMatchObject({ state: 'completed', language: 'en', kind: 'manual', version: 1 });
    expect(status.tracks.map((track: { language: string; kind: string }) => `${track.language}/${track.kind}`)).toEqual([
      'en/manual',
      'fr/auto',
    ]);
    const srt = await api.call(`/api/subtitles/${target}`, { key });
    expect(srt.status).toBe(200);
    expect(srt.body).toBe(
      '1\n00:00:00,000 --> 00:00:03,000\nEpisode 1 begins.\n\n2\n00:00:03,000 --> 00:00:06,000\nThe lathe is running.\n',
    );
    const again = await post(`/api/subtitles/${target}/fetch`);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('available');

    releaseGate();
    const rest = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000, lastEventId: info.id });
    expect(rest.events.at(-1)!.event).toBe('search:complete');
  });
});

describe('a crawl of the local archive', () => {
  it('queues fetches for the videos whose records list captions, and the worker stores them', async () => {
    const started = await post('/api/search', { query: archive.channelId });
    expect(started.status).toBe(200);
    const { events } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 });
    expect(events.at(-1)!.event).toBe('search:complete');
    for (const videoId of archive.subtitleVideoIds) {
      const status = await waitForStatus(videoId, 'available');
      expect(status.transcript).toMatchObject({ state: 'completed', language: 'en', kind: 'manual' });
      expect(status.tracks.map((track: { language: string; kind: string }) => `${track.language}/${track.kind}`)).toEqual([
        'de/auto',
        'en/manual',
      ]);
    }
    const without = archive.videoIds.find((id) => !archive.subtitleVideoIds.includes(id))!;
    expect((await api.call(`/api/subtitles/${without}/status`, { key })).body.data.status).toBe('none');
    const german = await api.call(`/api/subtitles/${archive.subtitleVideoIds[0]}?lang=de&format=vtt`, { key });
    expect(german.status).toBe(200);
    expect(german.body).toContain('willkommen zurück in der werkstatt');
    const [video] = await db.sql`select has_subtitles from videos where video_id = ${archive.subtitleVideoIds[0]!}`;
    expect(video!.has_subtitles).toBe(true);
  });
});
