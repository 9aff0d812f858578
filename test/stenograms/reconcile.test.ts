import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { createFileStore } from '../../core/stenograms/fileStore.ts';
import { reconcileStenogramStore } from '../../core/stenograms/reconcileStore.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';

let db: TestDatabase;
let dir: string;
const v = { kept: videoIdFor('rc-kept'), orphan: videoIdFor('rc-orphan'), young: videoIdFor('rc-young'), lost: videoIdFor('rc-lost'), failed: videoIdFor('rc-failed') };

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'afterimage-reconcile-'));
  await addVideos(db.sql, channelIdFor('reconcile'), Object.values(v).map((videoId) => ({ videoId })));
});

afterAll(async () => {
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function row(ownerId: string, videoId: string, status: 'generated' | 'failed', hoursAgo: number) {
  await db.sql`
    insert into stenograms (owner_id, video_id, status, error, language, llm_model, bytes, content_sha256, generated_at)
    values (${ownerId}::uuid, ${videoId}, ${status}, ${status === 'failed' ? 'it failed' : null}, 'en', 'afterimage-stenogram-1', 1,
      ${'0'.repeat(64)}, ${status === 'generated' ? db.sql`now() - make_interval(hours => ${hoursAgo})` : null})`;
}

describe('reconcile_stenograms', () => {
  it('removes files without a generated row and generated rows without a file, older than the grace period only', async () => {
    const { user } = await createKeyedUser(db.sql);
    const store = createFileStore(dir);
    const old = new Date(Date.now() - 2 * 3600_000);
    for (const videoId of [v.kept, v.orphan, v.young, v.failed]) await store.put(user.id, videoId, `# ${videoId}\n`);
    for (const videoId of [v.kept, v.orphan, v.failed]) await utimes(join(dir, user.id, `${videoId}.md`), old, old);
    await row(user.id, v.kept, 'generated', 2);
    await row(user.id, v.lost, 'generated', 2);
    await row(user.id, v.failed, 'failed', 2);

    const outcome = await reconcileStenogramStore(db.sql, store, createLogger('silent'));
    expect(outcome).toEqual({ orphanFiles: 2, rowsWithoutFile: 1 });
    expect(await store.get(user.id, v.kept)).toBe(`# ${v.kept}\n`);
    expect(await store.get(user.id, v.young)).toBe(`# ${v.young}\n`);
    expect(await store.get(user.id, v.orphan)).toBeUndefined();
    expect(await store.get(user.id, v.failed)).toBeUndefined();
    const rows = await db.sql<{ video_id: string }[]>`select video_id from stenograms order by video_id`;
    expect(rows.map((r) => r.video_id).sort()).toEqual([v.kept, v.failed].sort());

    expect(await reconcileStenogramStore(db.sql, store, createLogger('silent'))).toEqual({ orphanFiles: 0, rowsWithoutFile: 0 });
  });
});
