import type { PendingQuery, Row } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FtsSort } from '../../core/fts/backend.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { searchSubtitles } from '../../core/fts/subtitles.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

// Subtitle search matches windows of eight cues (sql/036_transcript_windows.sql): these transcripts put
// words on both sides of window boundaries. Cues are 3 s apart, so cue n (from 1) starts at 3 (n − 1) s.
let db: TestDatabase;
const talk = videoIdFor('windows:talk');
const other = videoIdFor('windows:other');
const filler = (n: number) => `filler sentence number ${n}`;

/** Forty cues of filler with `said` at the given cue numbers (from 1). */
const cues = (said: Record<number, string>) => Array.from({ length: 40 }, (_, i) => said[i + 1] ?? filler(i + 1));

async function setTranscript(videoId: string, lines: string[], language = 'en') {
  await addTrack(db.sql, { videoId, language, kind: 'manual', text: vttOf(lines) });
  await db.sql.begin((tx) => refreshTranscript(tx, videoId));
}

const search = (q: string, sort: FtsSort = 'date-desc', limit = 10) =>
  searchSubtitles(db.sql, { query: parseQuery(q), filters: {}, sort, offset: 0, limit }, 10_000);

/**
 * `count` videos with transcripts of cues made in SQL: `cues`, a JSON array, may read `n`, the video's
 * number from 1. Written in that order, so the last video's windows are the last read.
 */
async function addGeneratedTranscripts(name: string, count: number, cues: PendingQuery<Row[]>): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, n) => videoIdFor(`windows:${name}-${n}`));
  await addVideos(
    db.sql,
    channelIdFor('windows'),
    ids.map((videoId) => ({ videoId })),
  );
  await db.sql`
    insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash)
    select id, 'en', 'manual', 'archive', 'vtt', 1, made.cues, json_array_length(made.cues), length(made.cues::text),
      (made.cues -> -1 ->> 'endMs')::int, length(made.cues::text), md5(id) || md5(id)
    from unnest(${ids}::text[]) with ordinality as x(id, n), lateral (select ${cues} as cues) made order by n`;
  await db.sql`insert into transcripts (video_id, state, track_id) select video_id, 'completed', id from subtitle_tracks where video_id = any(${ids}) order by id`;
  return ids;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await addVideos(db.sql, channelIdFor('windows'), [{ videoId: talk }, { videoId: other }]);
  await setTranscript(
    talk,
    cues({
      1: 'a harbour opens at dawn',
      // Cues 8 and 9: the last of the first window and the first of the second.
      8: 'now we install the',
      9: 'interpreter on the boat',
      20: 'a lighthouse keeper waves',
      30: 'the quiet harbour at night',
      38: 'seagulls everywhere',
    }),
  );
  await setTranscript(other, cues({ 3: 'a lighthouse keeper sleeps', 33: 'no seagulls here' }));
});

afterAll(() => db.drop());

describe('subtitle search over cue windows', () => {
  it('finds a phrase across two cues at a window boundary, its hit at the first cue', async () => {
    const found = await search('"install the interpreter"');
    expect(found).toMatchObject({ videoIds: [talk], total: 1, totalExact: true });
    const hits = found.cues.get(talk)!;
    expect(hits.cues[0]).toMatchObject({
      startMs: 21_000,
      endMs: 24_000,
      text: [
        { text: 'now we ', marked: false },
        { text: 'install', marked: true },
        { text: ' ', marked: false },
        { text: 'the', marked: true },
      ],
    });
  });

  it('places a hit deep in the transcript at its cue and time', async () => {
    const found = await search('lighthouse');
    expect(new Set(found.videoIds)).toEqual(new Set([talk, other]));
    expect(found.cues.get(talk)).toEqual({
      cueMatches: 1,
      cues: [
        {
          startMs: 57_000,
          endMs: 60_000,
          text: [
            { text: 'a ', marked: false },
            { text: 'lighthouse', marked: true },
            { text: ' keeper waves', marked: false },
          ],
          url: `https://www.youtube.com/watch?v=${talk}&t=57s`,
        },
      ],
    });
    expect(found.cues.get(other)!.cues[0]!.startMs).toBe(6_000);
  });

  it('shows the cues of the windows holding a phrase, not every cue saying one of its words', async () => {
    const { cues: hits } = await search('"quiet harbour"');
    // "harbour" alone in cue 1 is not a hit of the phrase.
    expect(hits.get(talk)).toMatchObject({
      cueMatches: 1,
      cues: [
        {
          startMs: 87_000,
          text: [
            { text: 'the ', marked: false },
            { text: 'quiet', marked: true },
            { text: ' ', marked: false },
            { text: 'harbour', marked: true },
            { text: ' at night', marked: false },
          ],
        },
      ],
    });
  });

  it('matches every word and excludes a word anywhere in the transcript, whichever windows hold them', async () => {
    expect((await search('dawn lighthouse')).videoIds).toEqual([talk]);
    expect((await search('dawn lighthouse')).cues.get(talk)!.cues.map((cue) => cue.startMs)).toEqual([0, 57_000]);
    expect((await search('lighthouse -seagulls')).videoIds).toEqual([]);
    expect((await search('lighthouse -dawn')).videoIds).toEqual([other]);
    expect((await search('dawn OR sleeps')).total).toBe(2);
  });

  it("finds words through each transcript's words as through its windows", async () => {
    // Newest first, a query of words reads the transcripts' words (sql/042); by relevance, the windows.
    for (const q of ['lighthouse', 'dawn lighthouse', 'lighthouse -dawn', 'dawn OR sleeps', 'seagulls -"quiet harbour"', 'boat']) {
      const [byWords, byWindows] = [await search(q), await search(q, 'relevance')];
      expect(byWords.total, q).toBe(byWindows.total);
      expect(new Set(byWords.videoIds), q).toEqual(new Set(byWindows.videoIds));
      expect(byWords.cues, q).toEqual(byWindows.cues);
    }
  });

  it('excludes a word among many candidates as among few', async () => {
    // More candidates than have their own words read (FEW_CANDIDATES): the transcripts saying the word are looked up instead.
    await addGeneratedTranscripts(
      'bulk',
      240,
      db.sql`json_build_array(json_build_object('startMs', 0, 'endMs', 1000, 'text', 'a kestrel hovers'),
        json_build_object('startMs', 1000, 'endMs', 2000, 'text', case when n % 3 = 0 then 'an owl calls' else 'silence' end),
        json_build_object('startMs', 2000, 'endMs', 3000, 'text', case when n % 4 = 0 then 'calls of an owl' else 'wind' end))`,
    );
    expect((await search('kestrel')).total).toBe(240);
    // "an owl calls" in a third of them (n % 3 = 0) and "calls of an owl" in a quarter (n % 4 = 0, a
    // twelfth both): owls in 120. The words of "owl calls" said apart do not exclude a video.
    expect((await search('kestrel -owl')).total).toBe(120);
    expect((await search('"kestrel hovers" -"owl calls"')).total).toBe(160);
    expect((await search('kestrel -wind')).total).toBe(60);
    // Among few candidates (60), whose own words are read.
    expect((await search('"calls of an owl" -"owl calls"')).total).toBe(40);
    expect((await search('"calls of an owl" -silence')).total).toBe(20);
    expect((await search('"calls of an owl" -owl')).total).toBe(0);
  });

  it('answers a word said in more windows than are read exactly, newest first', async () => {
    // 500 transcripts of 808 cues saying "osprey": 101 windows each, 50,500 in all, more than a query by
    // relevance reads (WINDOW_CAP, 50,000). The newest video is the last written, so its windows are the
    // last read; newest first, every transcript's words are read instead.
    const ids = await addGeneratedTranscripts(
      'osprey',
      500,
      db.sql`(select json_agg(json_build_object('startMs', c * 1000, 'endMs', c * 1000 + 1000, 'text', 'osprey')) from generate_series(0, 807) c)`,
    );
    await db.sql`update videos set upload_date = date '2020-01-01' + n::int from unnest(${ids}::text[]) with ordinality as x(id, n) where video_id = id`;
    const newest = await search('osprey', 'date-desc', 3);
    expect(newest).toMatchObject({ videoIds: [ids[499], ids[498], ids[497]], total: 500, totalExact: true });
    expect(newest.cues.get(ids[499]!)!.cueMatches).toBe(808);
    const oldest = await search('osprey -kestrel', 'date-asc', 1);
    expect(oldest).toMatchObject({ videoIds: [ids[0]], total: 500, totalExact: true });
    // By relevance, from the windows read: a total that is not exact.
    expect(await search('osprey', 'relevance', 1)).toMatchObject({ totalExact: false });
  });

  it('follows the transcript when its track changes', async () => {
    const changed = videoIdFor('windows:changed');
    await addVideos(db.sql, channelIdFor('windows'), [{ videoId: changed, language: 'fr' }]);
    await setTranscript(changed, cues({ 12: 'un phare dans la nuit' }), 'en');
    expect((await search('phare')).videoIds).toEqual([changed]);
    expect((await search('nuit -voilier')).videoIds).toEqual([changed]);
    // A track in the video's language is chosen instead: its windows replace the first track's.
    await setTranscript(changed, cues({ 12: 'un voilier dans la nuit' }), 'fr');
    expect((await search('phare')).videoIds).toEqual([]);
    expect((await search('voilier')).cues.get(changed)!.cues[0]!.startMs).toBe(33_000);
    expect((await search('nuit -phare')).videoIds).toEqual([changed]);
    expect((await search('nuit -voilier')).videoIds).toEqual([]);
    expect(await db.sql`select window_no from transcript_windows where video_id = ${changed} order by 1`).toHaveLength(5);
  });
});
