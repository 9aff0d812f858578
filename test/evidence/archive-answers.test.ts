import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync, zipSync } from 'fflate';
import { MANIFEST, README, readmeText, writeBundle } from '../../core/evidence/bundle.ts';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle } from '../../core/evidence/verifyBundle.ts';
import { loadArchiveSubtitles } from '../../core/import/loadArchiveSubtitles.ts';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { createLogger } from '../../core/log.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createKeyedUser, createSignedInUser, startTestApi } from '../support/api.ts';
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
    subtitles: { en: [{ ext: 'vtt', name: 'English' }] },
  };
  const bytes = Buffer.from(JSON.stringify(document), 'utf8');
  await writeFile(join(folder, FILE), bytes);
  await utimes(join(folder, FILE), at, at);
  return bytes;
}

const SUBTITLES = `Lathes/Restoring a lathe [${VIDEO}].en.vtt`;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** What `afterimage import` does with the folder: the videos, then the subtitle files beside them. */
async function importArchive() {
  const stored = await storeArchiveScan(db.sql, await scanArchive(folder, { parseThreads: 0 }));
  await loadArchiveSubtitles(db.sql, stored.storedVideos, createLogger('silent'));
}

async function exportBundle(): Promise<Record<string, Uint8Array>> {
  const chunks: Uint8Array[] = [];
  await db.sql.begin('isolation level repeatable read read only', (tx) =>
    writeBundle(tx, { kind: 'video', videoId: VIDEO }, async (chunk) => {
      chunks.push(Uint8Array.from(chunk));
    }),
  );
  return unzipSync(Buffer.concat(chunks));
}

/** A bundle of `files` whose manifest lists them as they are and whose README names that manifest: only what else is wrong shows. */
function resealed(files: Record<string, Uint8Array>): Uint8Array {
  const manifest = JSON.parse(Buffer.from(files[MANIFEST]!).toString());
  manifest.files = manifest.files.filter((file: { path: string }) => files[file.path]);
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  return zipSync({ ...files, [MANIFEST]: manifestBytes, [README]: Buffer.from(readmeText(sha256(manifestBytes))) });
}
const kept = () => db.sql`
  select id::text, source, request_url, observed_at, http_status, content_type, decided, said, status_history_id::text,
    video_version_id::text, body_sha256, body_size, body_gzip
  from evidence_observations where video_id = ${VIDEO} order by id`;

describe('answers of the yt-dlp archive kept as evidence', () => {
  beforeAll(async () => {
    await writeFile(join(folder, SUBTITLES), 'WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nThe lathe, before it was restored.\n');
  });

  it('keeps the info.json behind a status and a metadata version, named inside the archive folder; counts the routine rest', async () => {
    // A source saw the video first without telling its status (checking): the archive decides it.
    await db.sql.begin((tx) => upsertVideos(tx, 'wayback', [{ videoId: VIDEO, channelId: CHANNEL, availability: 'unknown' }]));
    const first = await writeInfoJson('Restoring a lathe', WRITTEN);
    await importArchive();
    const [statusAnswer, subtitleAnswer, ...none] = await kept();
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
    // The subtitle file a version was read from, named the same way and linked to that version.
    const [track] = await db.sql`select id::text from subtitle_tracks where video_id = ${VIDEO}`;
    expect(subtitleAnswer).toMatchObject({
      source: 'archive',
      request_url: SUBTITLES,
      content_type: 'text/vtt',
      decided: 'subtitle_version',
    });
    expect(
      (await db.sql`select subtitle_track_id::text from evidence_observations where id = ${subtitleAnswer!.id}`)[0]!.subtitle_track_id,
    ).toBe(track!.id);

    // yt-dlp wrote the video again with a new title: the old values become a version, and the new file is kept beside it.
    const later = new Date('2024-06-01T10:00:00Z');
    const second = await writeInfoJson('Restoring a lathe (final)', later);
    await importArchive();
    const [, , versionAnswer] = await kept();
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
    expect(await kept()).toHaveLength(3);
    const [after] = await db.sql`select unkept_observations from video_checks where video_id = ${VIDEO}`;
    expect(after!.unkept_observations).toBe(before!.unkept_observations + 1);
    expect((await readFile(join(folder, FILE))).equals(second)).toBe(true);
  });
});

describe('versions naming the answers behind them', () => {
  it("names each version's kept answer in the bundle and on the video page; verify fails on a dangling one, naming it", async () => {
    const [versionAnswer, subtitleAnswer] = await db.sql`
      select id::text from evidence_observations where video_id = ${VIDEO} and decided in ('metadata_version', 'subtitle_version')
      order by decided`;
    const files = await exportBundle();
    const metadata = JSON.parse(Buffer.from(files['metadata-versions.json']!).toString());
    expect(metadata.versions).toEqual([
      expect.objectContaining({ title: 'Restoring a lathe', observation: `observations/${versionAnswer!.id}.json` }),
    ]);
    const subtitles = JSON.parse(Buffer.from(files['subtitle-versions.json']!).toString());
    expect(subtitles).toEqual([
      expect.objectContaining({
        file: 'subtitles/en.manual.v1.vtt',
        source: 'archive',
        observation: `observations/${subtitleAnswer!.id}.json`,
      }),
    ]);
    expect(files['subtitles/en.manual.v1.vtt']).toBeDefined();
    const intact = resealed(files);
    expect(await verifyBundle(bufferBytes(intact))).toMatchObject({ ok: true, problems: [] });

    for (const [record, id] of [
      ['metadata-versions.json', versionAnswer!.id],
      ['subtitle-versions.json', subtitleAnswer!.id],
    ] as const) {
      const { [`observations/${id}.json`]: _record, [`observations/${id}.body.gz`]: _body, ...dangling } = files;
      const verdict = await verifyBundle(bufferBytes(resealed(dangling)));
      expect(verdict.ok, record).toBe(false);
      expect(verdict.problems, record).toEqual([
        { file: record, problem: `names the kept answer observations/${id}.json, which is not in the bundle` },
      ]);
    }

    const api = await startTestApi(db.sql);
    try {
      const person = await createSignedInUser(db.sql);
      const html = await (await fetch(`${api.url}/videos/${VIDEO}`, { headers: { Accept: 'text/html', Cookie: person.cookie } })).text();
      expect(html).toContain(`href="/videos/${VIDEO}/evidence/${versionAnswer!.id}"`);
      expect(html).toContain(`observations/${versionAnswer!.id}.json`);
      expect(html).toContain(`href="/videos/${VIDEO}/evidence/${subtitleAnswer!.id}"`);
      // The API answers the bundle's records, built by the same functions.
      const { key } = await createKeyedUser(db.sql);
      const versions = await api.call(`/api/videos/${VIDEO}/versions`, { key });
      expect(versions.status).toBe(200);
      expect(versions.body.data).toEqual({ videoId: VIDEO, metadata, subtitles });
      expect((await api.call('/api/videos/unknownVid1/versions', { key })).status).toBe(404);
    } finally {
      await api.close();
    }
  });
});
