import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { createFileStore } from '../../core/stenograms/fileStore.ts';
import { createKeyedUser, startTestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';

let db: TestDatabase;
let dataDir: string;
let api: Awaited<ReturnType<typeof startTestApi>>;
const videoId = videoIdFor('fault-read');

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-stenogram-read-'));
  await addVideos(db.sql, channelIdFor('fault-read'), [{ videoId }]);
  api = await startTestApi(db.sql, { DATA_DIR: dataDir }, createLogger('silent'));
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a stenogram whose file is missing or failing', () => {
  it('answers 503 and keeps the row; the file coming back makes it readable again', async () => {
    const { user, key } = await createKeyedUser(db.sql);
    const store = createFileStore(join(dataDir, 'stenograms'));
    const { bytes, sha256 } = await store.put(user.id, videoId, '# kept\n');
    await db.sql`
      insert into stenograms (owner_id, video_id, status, language, llm_model, bytes, content_sha256, generated_at)
      values (${user.id}::uuid, ${videoId}, 'generated', 'en', 'afterimage-stenogram-1', ${bytes}, ${sha256}, now())`;
    const url = `/api/stenograms/@${user.id}/${videoId}`;
    const file = join(dataDir, 'stenograms', user.id, `${videoId}.md`);
    const rows = async () => (await db.sql`select 1 from stenograms where owner_id = ${user.id}::uuid`).length;
    expect((await api.call(url, { key })).status).toBe(200);

    // An unmounted store: the root is there but empty (ENOENT).
    await rename(join(dataDir, 'stenograms'), join(dataDir, 'mounted'));
    await mkdir(join(dataDir, 'stenograms'));
    const unmounted = await api.call(url, { key });
    expect(unmounted.status).toBe(503);
    expect(unmounted.body).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE' } });
    expect((await api.call(`${url}/stream`, { key })).status).toBe(503);
    expect(await rows()).toBe(1);

    // A failing read (not ENOENT): the path is a folder, so reading it fails with EISDIR, as EIO or EBUSY would.
    await mkdir(file, { recursive: true });
    expect((await api.call(url, { key })).status).toBe(503);
    expect(await rows()).toBe(1);

    // Mounted again: readable, nothing lost.
    await rm(join(dataDir, 'stenograms'), { recursive: true });
    await rename(join(dataDir, 'mounted'), join(dataDir, 'stenograms'));
    const back = await api.call(url, { key });
    expect(back.status).toBe(200);
    expect(back.body).toBe('# kept\n');
  });
});
