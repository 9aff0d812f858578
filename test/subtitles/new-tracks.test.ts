import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoRecord } from '../../core/sources/types.ts';
import { createKeyedUser, type TestApi } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource } from '../support/fake-source.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

// A video whose subtitles are stored gains a caption track later (the uploader adds French): the
// crawl that first sees the track asks for one fetch, and later crawls ask for none.
let db: TestDatabase;
let api: TestApi;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let folder: string;
let base: string;
let key: string;
const channel = { channelId: channelIdFor('new-tracks'), title: 'New Tracks', handle: '@newtracks' };
const videoId = videoIdFor('new-tracks-1');
let record: VideoRecord;

beforeAll(async () => {
  db = await createTestDatabase();
  folder = await mkdtemp(join(tmpdir(), 'afterimage-new-tracks-'));
  base = join(folder, `Talk [${videoId}]`);
  await writeFile(
    `${base}.info.json`,
    JSON.stringify({ id: videoId, title: 'Talk', channel_id: channel.channelId, subtitles: { en: [{ ext: 'vtt' }] } }),
  );
  await writeFile(`${base}.en.vtt`, vttOf(['Welcome to the talk.', 'Today: old lathes.']));
  record = {
    videoId,
    channelId: channel.channelId,
    title: 'Talk',
    captions: [{ language: 'en', kind: 'manual' }],
    evidenceUrl: pathToFileURL(`${base}.info.json`).href,
    availability: 'live',
  };
  stack = await startSearchStack(db, { ARCHIVE_DIR: folder }, { sources: [fakeSource({ name: 'archive', channel, videos: [record] })] });
  api = stack.api;
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await stack?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
  await db?.drop();
});

async function crawl() {
  const started = await api.call('/api/search', {
    method: 'POST',
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: channel.channelId }),
  });
  expect(started.status).toBe(200);
  const { events } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 });
  expect(events.at(-1)!.event).toBe('search:complete');
}

const languages = async () =>
  (await db.sql<{ language: string }[]>`select distinct language from subtitle_tracks where video_id = ${videoId} order by language`).map(
    (row) => row.language,
  );
const noFetchQueued = async () =>
  (await db.sql`select 1 from graphile_worker.jobs where task_identifier = 'fetch_subtitles'`).length === 0 || undefined;
const requestedAt = async () =>
  (await db.sql<{ at: Date }[]>`select requested_at as at from transcripts where video_id = ${videoId}`)[0]!.at.getTime();

describe('a caption track added after the subtitles were fetched', () => {
  it('is fetched by the crawl that first announces it, and not asked for again', async () => {
    await crawl();
    await eventually(async () => (await languages()).length > 0 || undefined, 'the English track to be fetched');
    await eventually(noFetchQueued, 'the first fetch to finish');
    expect(await languages()).toEqual(['en']);

    await writeFile(`${base}.fr.vtt`, vttOf(['Bienvenue à la conférence.', 'Aujourd’hui : les vieux tours.']));
    record.captions = [...record.captions!, { language: 'fr', kind: 'auto' }];
    await crawl();
    await eventually(async () => (await languages()).includes('fr') || undefined, 'the French track to be fetched');
    expect(await languages()).toEqual(['en', 'fr']);
    await eventually(noFetchQueued, 'the second fetch to finish');

    const fetchedAt = await requestedAt();
    await crawl();
    expect(await requestedAt()).toBe(fetchedAt);
  });
});
