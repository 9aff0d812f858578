import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// sql/024: an update that changes no column is skipped (no new row version, updated_at kept), for
// videos (whose generated columns are left out of the comparison) and channels.
let db: TestDatabase;
const channelId = 'UCskipunchanged000000000';
const videoId = 'skipUnchang';
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`insert into channels (channel_id, title, aliases) values (${channelId}, 'Skips', '{a,b}')`;
  await db.sql`insert into videos (video_id, channel_id, title, description, tags, caption_languages, view_count, video_file_url, status)
    values (${videoId}, ${channelId}, 'Old lathes', 'A restoration', '{lathe,metal}', '[{"language":"en","kind":"manual"}]', 10, 'file:///a.mp4', 'live')`;
});
afterAll(async () => db?.drop());

const video = async () =>
  (
    await db.sql<{ updatedAt: Date; version: string; fts: string; hasVideo: boolean }[]>`
  select updated_at as "updatedAt", xmin::text as version, fts::text as fts, has_video as "hasVideo" from videos where video_id = ${videoId}`
  )[0]!;

describe('updates that change nothing', () => {
  it('leave a video as it was: same row version, same updated_at, same search document', async () => {
    const before = await video();
    const result =
      await db.sql`update videos set title = title, description = description, tags = tags, caption_languages = caption_languages,
      view_count = view_count, video_file_url = video_file_url, status = status where video_id = ${videoId}`;
    expect(result.count).toBe(0);
    expect(await video()).toEqual(before);
  });

  it('write a video that changed, recomputing its generated columns', async () => {
    const before = await video();
    expect(before.hasVideo).toBe(true);
    expect((await db.sql`update videos set view_count = 11 where video_id = ${videoId}`).count).toBe(1);
    const counted = await video();
    expect(counted.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect(counted.fts).toBe(before.fts);
    expect(
      (await db.sql`update videos set description = 'A restoration of a drill press', video_file_url = null where video_id = ${videoId}`)
        .count,
    ).toBe(1);
    const rewritten = await video();
    expect(rewritten.fts).toContain("'drill'");
    expect(rewritten.hasVideo).toBe(false);
  });

  it('leave a channel as it was, and write one that changed', async () => {
    const updatedAt = async () =>
      (await db.sql<{ at: Date }[]>`select updated_at as at from channels where channel_id = ${channelId}`)[0]!.at.getTime();
    const before = await updatedAt();
    expect((await db.sql`update channels set title = title, aliases = aliases where channel_id = ${channelId}`).count).toBe(0);
    expect(await updatedAt()).toBe(before);
    expect((await db.sql`update channels set aliases = '{a,b,c}' where channel_id = ${channelId}`).count).toBe(1);
    expect(await updatedAt()).toBeGreaterThan(before);
  });
});
