import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

/**
 * A stenogram generated while its file store's volume is not mounted: the empty mount point has no
 * store marker, so the write is refused, the generation fails and is refunded, and nothing lands in
 * the mount point; mounted again, the same request succeeds. Also after a restart while unmounted.
 */
let db: TestDatabase;
let dataDir: string;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let user: Awaited<ReturnType<typeof createKeyedUser>>;
const channelId = channelIdFor('unmounted');
const [first, second, third] = [videoIdFor('unmounted-1'), videoIdFor('unmounted-2'), videoIdFor('unmounted-3')];
const root = () => join(dataDir, 'stenograms');
const volume = () => join(dataDir, 'volume');

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-stenogram-unmounted-'));
  await addVideos(db.sql, channelId, [{ videoId: first }, { videoId: second }, { videoId: third }]);
  for (const videoId of [first, second, third]) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(['>> Hello there.', 'Fine, thanks.'], 4) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
  stack = await startSearchStack(db, { DATA_DIR: dataDir });
  user = await createKeyedUser(db.sql);
});

afterAll(async () => {
  await stack?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const generate = async (videoId: string) =>
  (await readStream(`${stack.api.url}/api/stenograms/${videoId}/generate`, { key: user.key, method: 'POST', timeoutMs: 25_000 })).events.at(
    -1,
  )!;
const charged = async () =>
  (
    await db.sql<{ used: number }[]>`
    select coalesce(sum(used), 0)::int as used from usage_counters where subject = ${user.keyId}::uuid and limit_name = 'apiStenogramsPerDay'`
  )[0]!.used;
const unmount = async () => {
  await rename(root(), volume());
  await mkdir(root());
};
const mount = async () => {
  await rm(root(), { recursive: true });
  await rename(volume(), root());
};

async function expectRefused(videoId: string) {
  const before = await charged();
  const final = await generate(videoId);
  expect(final.event).toBe('stenogram:error');
  expect(final.data).toMatchObject({ refunded: true, message: expect.stringMatching(/is not mounted|Check that its volume is mounted/) });
  expect(await charged()).toBe(before);
  expect(await readdir(root())).toEqual([]);
  const [row] = await db.sql`select status from stenograms where video_id = ${videoId}`;
  expect(row).toEqual({ status: 'failed' });
}

describe('a stenogram generated while its store is unmounted', () => {
  it('fails and is refunded, writing nothing into the mount point; mounted again, it is stored', async () => {
    expect((await generate(first)).event).toBe('stenogram:complete');
    await unmount();
    await expectRefused(second);
    await mount();
    expect((await generate(second)).event).toBe('stenogram:complete');
    expect((await stack.api.call(`/api/stenograms/@${user.user.id}/${second}`, { key: user.key })).status).toBe(200);
  });

  it('is refused by a process started while the store was unmounted (the rows say stenograms were stored)', async () => {
    await stack.close();
    await unmount();
    stack = await startSearchStack(db, { DATA_DIR: dataDir });
    await expectRefused(third);
    await mount();
    expect((await generate(third)).event).toBe('stenogram:complete');
  });
});
