import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { planBulkDownload, type BulkPlan } from '../../core/subtitles/bulk.ts';
import { bulkJson } from '../../core/subtitles/bulkJson.ts';
import { bulkZip } from '../../core/subtitles/bulkZip.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

// The packaging of a bulk subtitle download, without HTTP: which tracks go, the byte cap, the zip's
// entries and the JSON document, over more videos than one page of cues.

let db: TestDatabase;
const many = Array.from({ length: 12 }, (_, i) => videoIdFor(`bulk-core-${i}`));
const french = videoIdFor('bulk-core-french');
const bare = videoIdFor('bulk-core-bare');
const unknown = videoIdFor('bulk-core-unknown');
const NO_CAP = 1_000_000;

beforeAll(async () => {
  db = await createTestDatabase();
  await addVideos(db.sql, channelIdFor('bulk-core'), [...many.map((videoId) => ({ videoId })), { videoId: french }, { videoId: bare }]);
  for (const [i, videoId] of many.entries())
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf([`cue ${i}`, i % 4 === 0 ? 'the lathe' : 'nothing']) });
  await addTrack(db.sql, { videoId: french, language: 'fr', kind: 'auto', text: vttOf(['le tour']) });
});

afterAll(async () => {
  await db?.drop();
});

async function collect<T>(pieces: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const piece of pieces) all.push(piece);
  return all;
}

describe('planBulkDownload', () => {
  it('keeps request order without repeats and says why each other video is left out', async () => {
    const plan = await planBulkDownload(db.sql, { videoIds: [many[1]!, unknown, many[0]!, bare, french, many[1]!], lang: 'en' }, NO_CAP);
    expect(plan.requested).toBe(5);
    expect(plan.planned.map((entry) => entry.video.videoId)).toEqual([many[1], many[0]]);
    expect(plan.missing).toEqual([
      { videoId: unknown, reason: 'unknown_video', message: `no video ${unknown} is stored` },
      { videoId: bare, reason: 'no_subtitles', message: `no subtitles stored; POST /api/subtitles/${bare}/fetch looks for them` },
      { videoId: french, reason: 'no_matching_track', message: 'no subtitles in en; it has fr (auto)' },
    ]);
  });

  it('takes text up to SUBTITLE_BULK_MAX_BYTES exactly and refuses one byte more, counting only the tracks sent', async () => {
    const sent = (await planBulkDownload(db.sql, { videoIds: many }, NO_CAP)).planned.reduce(
      (sum, entry) => sum + entry.track.textBytes,
      0,
    );
    await expect(planBulkDownload(db.sql, { videoIds: [...many, bare, unknown] }, sent)).resolves.toMatchObject({ requested: 14 });
    const refused = await planBulkDownload(db.sql, { videoIds: many }, sent - 1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'INVALID_INPUT', options: { details: { textBytes: sent, maxBytes: sent - 1 } } });
    expect((refused as AppError).message).toMatch(/^videoIds: these subtitles hold \d+ bytes of text, more than the \d+ bytes/);
  });
});

describe('bulkZip', () => {
  it('names each file <videoId>.<language>.<fileFormat>, in request order, then manifest.json with the totals', async () => {
    const plan = await planBulkDownload(db.sql, { videoIds: [...many, french, unknown] }, NO_CAP);
    const files = unzipSync(Buffer.concat(await collect(bulkZip(db.sql, plan, { fileFormat: 'vtt', query: 'lathe' }))));
    expect(Object.keys(files)).toEqual([...many.map((id) => `${id}.en.vtt`), `${french}.fr.vtt`, 'manifest.json']);
    expect(strFromU8(files[`${many[0]}.en.vtt`]!)).toMatch(/^WEBVTT\n[\s\S]*the lathe/);
    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    expect(manifest).toMatchObject({
      format: 'zip',
      fileFormat: 'vtt',
      query: 'lathe',
      missing: [{ videoId: unknown, reason: 'unknown_video' }],
    });
    expect(manifest.videos[4]).toMatchObject({
      videoId: many[4],
      file: `${many[4]}.en.vtt`,
      matchCount: 1,
      matches: [{ text: 'the lathe' }],
    });
    expect(manifest.totals).toEqual({
      requested: 14,
      returned: 13,
      missing: 1,
      cues: 25,
      matches: 3,
      textBytes: plan.planned.reduce((sum, entry) => sum + entry.track.textBytes, 0),
    });
  });

  it('ends cleanly when its reader stops early', async () => {
    const plan: BulkPlan = await planBulkDownload(db.sql, { videoIds: many }, NO_CAP);
    const pieces = bulkZip(db.sql, plan, { fileFormat: 'srt' });
    expect((await pieces.next()).done).toBe(false);
    expect(await pieces.return(undefined)).toEqual({ done: true, value: undefined });
    expect((await pieces.next()).done).toBe(true);
  });
});

describe('bulkJson', () => {
  it('is one JSON document: an opening, one piece per video, the closing with the totals', async () => {
    const plan = await planBulkDownload(db.sql, { videoIds: [...many, bare] }, NO_CAP);
    const pieces = await collect(bulkJson(db.sql, plan, { format: 'json', query: 'lathe' }));
    expect(pieces).toHaveLength(many.length + 2);
    const document = JSON.parse(pieces.join(''));
    expect(document).toMatchObject({ format: 'json', query: 'lathe', missing: [{ videoId: bare, reason: 'no_subtitles' }] });
    expect(document.videos.map((video: { videoId: string }) => video.videoId)).toEqual(many);
    expect(document.videos[0].cues[1]).toEqual({
      startMs: 3000,
      endMs: 6000,
      start: '00:00:03.000',
      end: '00:00:06.000',
      text: 'the lathe',
      match: true,
    });
    expect(document.totals).toMatchObject({ requested: 13, returned: 12, missing: 1, cues: 24, matches: 3 });
    const srt = JSON.parse((await collect(bulkJson(db.sql, plan, { format: 'srt' }))).join(''));
    expect(srt.videos[0]).not.toHaveProperty('cues');
    expect(srt.videos[0].text).toMatch(/^1\n00:00:00,000 --> 00:00:03,000\ncue 0\n/);
  });
});
