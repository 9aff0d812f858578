import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

const CHANNEL = 'UCarchiveevidencearchiv1';
const VIDEO = 'arcEvidenc1';
const FILE = `Lathes/Restoring a lathe [${VIDEO}].info.json`;
const WRITTEN = new Date('2024-05-01T10:00:00Z');

let db: TestDatabase;
let folder: string;

beforeAll(async () => {
  db = await createTestDatabase();
  folder = await mkdtemp(join(tmpdir(), 'archive-evidence-'));
  await mkdir(join(folder, 'Lathes'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  await db?.drop();
});

/** yt-dlp's info.json of the video as it wrote it at `at`. */
async function writeInfoJson(title: string, at: Date): Promise<Buffer> {
  const document = {
    id: VIDEO,
    extractor: 'youtube',
    title,
    channel_id: CHANNEL,
    channel: 'Lathes',
    upload_date: '20240101',
    epoch: Math.floor(at.getTime() / 1000),
    tags: ['lathe'],
  };
  const bytes = Buffer.from(JSON.stringify(document), 'utf8');
  await writeFile(join(folder, FILE), bytes);
  await utimes(join(folder, FILE), at, at);
  return bytes;
}

const importArchive = async () => storeArchiveScan(db.sql, await scanArchive(folder, { parseThreads: 0 }));
const kept = () => db.sql`
  select id::text, source, request_url, observed_at, http_status, content_type, decided, said, status_history_id::text,
    video_version_id::text, body_sha256, body_size, body_gzip
  from evidence_observations where video_id = ${VIDEO} order by id`;

describe('answers of the yt-dlp archive kept as evidence', () => {
  it('keeps the info.json behind a status and a metadata version, named inside the archive folder; counts the routine rest', async () => {
    // A source saw the video first without telling its status (checking): the archive decides it.
    await db.sql.begin((tx) => upsertVideos(tx, 'wayback', [{ videoId: VIDEO, channelId: CHANNEL, availability: 'unknown' }]));
    const first = await writeInfoJson('Restoring a lathe', WRITTEN);
    await importArchive();
    const [statusAnswer, ...none] = await kept();
    expect(none).toHaveLength(0);
    const [live] = await db.sql`select id::text from video_status_history where video_id = ${VIDEO} and status = 'live'`;
    expect(statusAnswer).toMatchObject({
      source: 'archive',
      request_url: FILE,
      http_status: null,
      content_type: 'application/json',
      decided: 'status_change',
      status_history_id: live!.id,
      video_version_id: null,
      body_sha256: createHash('sha256').update(first).digest('hex'),
      body_size: first.length,
    });
    expect(statusAnswer!.request_url).not.toContain(folder);
    expect(statusAnswer!.said).toContain(FILE);
    // When yt-dlp wrote it (the file's modification time), not when it was read.
    expect((statusAnswer!.observed_at as Date).toISOString()).toBe(WRITTEN.toISOString());
    expect(gunzipSync(statusAnswer!.body_gzip).equals(first)).toBe(true);

    // yt-dlp wrote the video again with a new title: the old values become a version, and the new file is kept beside it.
    const later = new Date('2024-06-01T10:00:00Z');
    const second = await writeInfoJson('Restoring a lathe (final)', later);
    await importArchive();
    const [, versionAnswer] = await kept();
    const [version] = await db.sql`select id::text, title from video_versions where video_id = ${VIDEO}`;
    expect(version!.title).toBe('Restoring a lathe');
    expect(versionAnswer).toMatchObject({
      request_url: FILE,
      decided: 'metadata_version',
      video_version_id: version!.id,
      status_history_id: null,
      body_sha256: createHash('sha256').update(second).digest('hex'),
    });
    expect((versionAnswer!.observed_at as Date).toISOString()).toBe(later.toISOString());

    // Read again unchanged: a routine "still live" answer, counted and not kept.
    const [before] = await db.sql`select unkept_observations from video_checks where video_id = ${VIDEO}`;
    await importArchive();
    expect(await kept()).toHaveLength(2);
    const [after] = await db.sql`select unkept_observations from video_checks where video_id = ${VIDEO}`;
    expect(after!.unkept_observations).toBe(before!.unkept_observations + 1);
    expect((await readFile(join(folder, FILE))).equals(second)).toBe(true);
  });
});
