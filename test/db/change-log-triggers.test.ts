import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoRecord } from '../../core/sources/types.ts';
import type { Observation } from '../../core/status/observation.ts';
import { recordObservations } from '../../core/status/recordObservations.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// sql/045 and 047: the change log is written by triggers, from the status history, from metadata updates and
// from new videos of watched channels; these pin what is news and what is not.
let db: TestDatabase;
const CHANNEL = 'UCchangelog000000000000a';
const WATCHED = 'UCchangelog000000000000w';

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`insert into channels (channel_id) values (${CHANNEL}), (${WATCHED})`;
});
afterAll(async () => db?.drop());

const id = (n: number) => `chlog${String(n).padStart(6, '0')}`;
const record = (videoId: string, fields: Partial<VideoRecord> = {}): VideoRecord => ({
  videoId,
  channelId: CHANNEL,
  title: `Video ${videoId}`,
  uploadDate: '2024-01-01',
  availability: 'live',
  ...fields,
});
const store = (source: 'youtube_api' | 'archive', records: VideoRecord[]) => db.sql.begin((tx) => upsertVideos(tx, source, records));

interface ChangeRow {
  kind: string;
  videoId: string;
  statusHistoryId: string | null;
  versionId: string | null;
  details: Record<string, unknown>;
}
const changesOf = (videoId: string) => db.sql<ChangeRow[]>`
  select kind, video_id as "videoId", status_history_id::text as "statusHistoryId", version_id::text as "versionId", details
  from changes where video_id = ${videoId} order by id`;

const observe = (observation: Observation) =>
  db.sql.begin((tx) => recordObservations(tx, [observation], { confirmMinutes: 0, recheckDays: 30 }));
const gone = (videoId: string): Observation => ({
  videoId,
  outcome: 'gone',
  reason: 'copyright',
  claimant: 'Example Records',
  source: 'watch_page',
  evidence: 'This video is no longer available due to a copyright claim by Example Records',
});

describe('change log triggers', () => {
  it('logs a confirmed deletion once, with its reason, claimant, evidence and previous status; a restore after it', async () => {
    await store('youtube_api', [record(id(1))]);
    await observe(gone(id(1)));
    expect(await changesOf(id(1))).toEqual([]); // suspected only: not a change yet
    await observe(gone(id(1)));
    const [deleted, ...rest] = await changesOf(id(1));
    expect(rest).toEqual([]);
    expect(deleted).toMatchObject({
      kind: 'video.deleted',
      details: {
        title: `Video ${id(1)}`,
        status: 'deleted',
        previousStatus: 'live',
        reason: 'copyright',
        claimant: 'Example Records',
        source: 'watch_page',
      },
    });
    expect(deleted!.details.evidence).toContain('copyright claim by Example Records');
    const [history] = await db.sql<{ id: string }[]>`
      select id::text from video_status_history where video_id = ${id(1)} and status = 'deleted'`;
    expect(deleted!.statusHistoryId).toBe(history!.id);

    await observe({ videoId: id(1), outcome: 'available', source: 'watch_page', evidence: 'playable' });
    expect((await changesOf(id(1))).map((change) => [change.kind, change.details.previousStatus])).toEqual([
      ['video.deleted', 'live'],
      ['video.restored', 'deleted'],
    ]);
  });

  it('logs a re-upload with the link to the new video', async () => {
    await store('youtube_api', [record(id(2)), record(id(3), { uploadDate: '2024-02-01' })]);
    await observe(gone(id(2)));
    await observe(gone(id(2)));
    // What link_reuploads writes when it finds the re-upload (core/status/linkReuploads.ts).
    await db.sql`update videos set status = 're-uploaded', reuploaded_as = ${id(3)}, status_source = 'reupload_link',
      status_evidence = ${`re-uploaded as ${id(3)}`} where video_id = ${id(2)}`;
    const reuploaded = (await changesOf(id(2))).at(-1)!;
    expect(reuploaded).toMatchObject({
      kind: 'video.reuploaded',
      details: { status: 're-uploaded', previousStatus: 'deleted', linkedVideoId: id(3), source: 'reupload_link' },
    });
  });

  it('does not log a first status: a video stored gone, nor one first learned while it was checking', async () => {
    await db.sql`insert into videos (video_id, channel_id, status, status_reason) values (${id(4)}, ${CHANNEL}, 'deleted', 'private')`;
    await db.sql`insert into videos (video_id, channel_id) values (${id(5)}, ${CHANNEL})`;
    await db.sql`update videos set status = 'deleted', status_reason = 'private' where video_id = ${id(5)}`;
    await db.sql`insert into videos (video_id, channel_id, status) values (${id(6)}, ${CHANNEL}, 'live')`;
    expect(await db.sql`select 1 from changes where video_id = any(${[id(4), id(5), id(6)]})`).toHaveLength(0);
  });

  it('keeps a version and logs the change when a source of the same rank sees new metadata; a better source changes nothing', async () => {
    await store('archive', [record(id(7), { title: 'First title', tags: ['one'] })]);
    await store('archive', [record(id(7), { title: 'Second title', tags: ['one'] })]);
    const [changed, ...none] = await changesOf(id(7));
    expect(none).toEqual([]);
    expect(changed).toMatchObject({
      kind: 'video.metadata_changed',
      details: { title: 'Second title', changed: ['title'], before: { title: 'First title' }, after: { title: 'Second title' } },
    });
    const versions = await db.sql<{ id: string; title: string; tags: string[] }[]>`
      select id::text, title, tags from video_versions where video_id = ${id(7)}`;
    expect(versions).toEqual([{ id: changed!.versionId, title: 'First title', tags: ['one'] }]);

    // The API (a better rank) correcting the archive's title: the video's metadata improves, it did not change.
    await store('youtube_api', [record(id(7), { title: 'Third title', tags: ['two'] })]);
    expect(await db.sql`select title from videos where video_id = ${id(7)}`).toEqual([{ title: 'Third title' }]);
    expect(await changesOf(id(7))).toHaveLength(1);
    expect(await db.sql`select 1 from video_versions where video_id = ${id(7)}`).toHaveLength(1);
  });

  it('logs a new upload of a watched channel, not an old video of it found later nor a video of an unwatched channel', async () => {
    const { user } = await createKeyedUser(db.sql);
    const [list] = await db.sql<{ id: string }[]>`insert into watchlists (owner_id, name) values (${user.id}, 'mine') returning id`;
    await db.sql`insert into watchlist_items (watchlist_id, kind, channel_id) values (${list!.id}, 'channel', ${WATCHED})`;
    const today = new Date().toISOString().slice(0, 10);
    await store('youtube_api', [
      record(id(8), { channelId: WATCHED, uploadDate: today }),
      record(id(9), { channelId: WATCHED, uploadDate: '2019-05-05' }),
      record(id(10), { uploadDate: today }),
    ]);
    expect(await changesOf(id(8))).toMatchObject([
      { kind: 'channel.video_added', details: { title: `Video ${id(8)}`, uploadDate: today } },
    ]);
    expect(await changesOf(id(9))).toEqual([]);
    expect(await changesOf(id(10))).toEqual([]);
  });

  it('queues the fan-out in a queue of its own: a change logged while one runs waits for it, never runs beside it', async () => {
    await store('archive', [record(id(900))]);
    await observe(gone(id(900)));
    const jobs = await db.sql<{ queueName: string | null }[]>`
      select queue_name as "queueName" from graphile_worker.jobs where task_identifier = 'fan_out_changes'`;
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) expect(job.queueName).toBe('fan_out_changes');
  });

  it('refuses to update or delete a change or a version', async () => {
    const refused = { code: '42501' };
    await expect(db.sql`update changes set details = '{}'`).rejects.toMatchObject(refused);
    await expect(db.sql`delete from changes`).rejects.toMatchObject(refused);
    await expect(db.sql`update video_versions set title = 'rewritten'`).rejects.toMatchObject(refused);
    await expect(db.sql`delete from video_versions`).rejects.toMatchObject(refused);
    // Refused, not merely matching nothing: both tables hold rows.
    expect(await db.sql`select 1 from changes`).not.toHaveLength(0);
    expect(await db.sql`select 1 from video_versions`).not.toHaveLength(0);
  });
});
