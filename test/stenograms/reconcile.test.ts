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
const v = {
  kept: videoIdFor('rc-kept'),
  orphan: videoIdFor('rc-orphan'),
  young: videoIdFor('rc-young'),
  lost: videoIdFor('rc-lost'),
  failed: videoIdFor('rc-failed'),
};

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'afterimage-reconcile-'));
  await addVideos(
    db.sql,
    channelIdFor('reconcile'),
    Object.values(v).map((videoId) => ({ videoId })),
  );
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

const silent = createLogger('silent');

describe('reconcile_stenograms', () => {
  it('marks generated rows without a file (never deletes them) and removes orphan files only after several runs', async () => {
    const { user } = await createKeyedUser(db.sql);
    const store = createFileStore(dir);
    const old = new Date(Date.now() - 2 * 3600_000);
    for (const videoId of [v.kept, v.orphan, v.young, v.failed]) await store.put(user.id, videoId, `# ${videoId}\n`);
    for (const videoId of [v.kept, v.orphan, v.failed]) await utimes(join(dir, user.id, `${videoId}.md`), old, old);
    await row(user.id, v.kept, 'generated', 2);
    await row(user.id, v.lost, 'generated', 2);
    await row(user.id, v.failed, 'failed', 2);
    const marked = async () =>
      (await db.sql<{ video_id: string }[]>`select video_id from stenograms where file_missing_since is not null`).map((r) => r.video_id);

    // The failed row still refers to its file; the young file may be a generation in flight.
    expect(await reconcileStenogramStore(db.sql, store, silent)).toEqual({
      rowsMarkedMissing: 1,
      rowsFoundAgain: 0,
      orphansWaiting: 1,
      orphanFilesRemoved: 0,
    });
    expect(await marked()).toEqual([v.lost]);
    expect(await reconcileStenogramStore(db.sql, store, silent)).toEqual({
      rowsMarkedMissing: 0,
      rowsFoundAgain: 0,
      orphansWaiting: 1,
      orphanFilesRemoved: 0,
    });
    // A third consecutive run: still kept while the orphan was first seen less than two hours ago.
    expect(await reconcileStenogramStore(db.sql, store, silent)).toMatchObject({ orphansWaiting: 1, orphanFilesRemoved: 0 });
    await db.sql`update stenogram_orphans set first_seen_at = now() - interval '3 hours'`;
    expect(await reconcileStenogramStore(db.sql, store, silent)).toMatchObject({ orphansWaiting: 0, orphanFilesRemoved: 1 });
    expect(await store.get(user.id, v.orphan)).toBeUndefined();
    for (const videoId of [v.kept, v.young, v.failed]) expect(await store.get(user.id, videoId)).toBe(`# ${videoId}\n`);
    expect((await db.sql`select video_id from stenograms`).length).toBe(3);

    // The file back: the mark goes.
    await store.put(user.id, v.lost, `# ${v.lost}\n`);
    expect(await reconcileStenogramStore(db.sql, store, silent)).toMatchObject({
      rowsMarkedMissing: 0,
      rowsFoundAgain: 1,
      orphanFilesRemoved: 0,
    });
    expect(await marked()).toEqual([]);
  });

  it('an orphan that a run does not see orphaned starts counting again', async () => {
    const { user } = await createKeyedUser(db.sql);
    const store = createFileStore(dir);
    const old = new Date(Date.now() - 2 * 3600_000);
    await store.put(user.id, v.orphan, '# again\n');
    await utimes(join(dir, user.id, `${v.orphan}.md`), old, old);
    await reconcileStenogramStore(db.sql, store, silent);
    await reconcileStenogramStore(db.sql, store, silent);
    await row(user.id, v.orphan, 'failed', 2);
    await reconcileStenogramStore(db.sql, store, silent);
    await db.sql`delete from stenograms where owner_id = ${user.id}::uuid`;
    await db.sql`update stenogram_orphans set first_seen_at = now() - interval '3 hours'`;
    expect(await reconcileStenogramStore(db.sql, store, silent)).toMatchObject({ orphanFilesRemoved: 0 });
    expect((await db.sql<{ runs: number }[]>`select runs from stenogram_orphans where owner_id = ${user.id}::uuid`)[0]!.runs).toBe(1);
    expect(await store.get(user.id, v.orphan)).toBe('# again\n');
  });
});
