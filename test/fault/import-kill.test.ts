import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { eventually, killService, parseJson, runCli, startService } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { countOf } from '../support/faults.ts';

// A real `afterimage import` killed with SIGKILL half-way, then run again: the database must end as after
// one clean import. Nothing here is timed, so it runs beside the other files.

describe('kill -9 of `afterimage import` half-way', () => {
  let killed: TestDatabase;
  let clean: TestDatabase;
  let archive: ArchiveFixture;

  beforeAll(async () => {
    [killed, clean, archive] = await Promise.all([
      createTestDatabase(),
      createTestDatabase(),
      createArchiveFixture({ videos: 2_500, seed: 'fault-import', formats: 1, mediaEvery: 0, subtitlesEvery: 20 }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await archive?.cleanup();
    await Promise.all([killed?.drop(), clean?.drop()]);
  });

  const state = async (db: TestDatabase) => ({
    videos: await countOf(db, 'videos'),
    channels: await countOf(db, 'channels'),
    subtitleVersions: await countOf(db, 'subtitle_tracks'),
    statusHistory: await countOf(db, 'video_status_history'),
    newestVersion: (await db.sql<{ v: number }[]>`select coalesce(max(version), 0)::int as v from subtitle_tracks`)[0]!.v,
  });

  it('imported again, the database ends as after one clean import: same rows, no second subtitle version', async () => {
    const interrupted = startService(['import', archive.dir, '--json'], { DATABASE_URL: killed.url });
    await eventually(async () => (await countOf(killed, 'videos')) > 0, 'the first imported batch', 60_000);
    const stillRunning = interrupted.child.exitCode === null;
    await killService(interrupted, 'SIGKILL');
    expect(stillRunning, 'the import must still run when it is killed').toBe(true);
    const half = await state(killed);
    expect(half.videos).toBeLessThan(archive.allVideoIds.length + archive.legacy!.videoIds.length);

    const [again, once] = await Promise.all([
      runCli(['import', archive.dir, '--json'], { DATABASE_URL: killed.url }),
      runCli(['import', archive.dir, '--json'], { DATABASE_URL: clean.url }),
    ]);
    // 3: imported, with the fixture's malformed file skipped.
    expect([again.code, once.code], again.stderr + once.stderr).toEqual([3, 3]);
    expect(parseJson(again).videos).toBe(parseJson(once).videos);
    const [after, reference] = [await state(killed), await state(clean)];
    expect(after).toEqual(reference);
    expect(reference.newestVersion).toBe(1);
    expect(reference.videos).toBe(archive.allVideoIds.length + archive.legacy!.videoIds.length);
  }, 120_000);
});
