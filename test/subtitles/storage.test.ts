import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { contentHash, prepareTrack } from '../../core/subtitles/store.ts';
import { markTranscriptsPending, readTranscript, refreshTranscript } from '../../core/subtitles/transcript.ts';
import { chooseTrack, latestTracks, readCues, type TrackInfo } from '../../core/subtitles/tracks.ts';
import { matchCues, foldText } from '../../core/subtitles/match.ts';
import { VIDEO_JSON, type VideoObject } from '../../core/videos/videoObject.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addTrack, addVideos, channelIdFor, json3Of, srtOf, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
const channelId = channelIdFor('storage');
const ids = {
  versions: videoIdFor('versions'),
  flags: videoIdFor('flags'),
  choice: videoIdFor('choice'),
  german: videoIdFor('german'),
  states: videoIdFor('states'),
  race: videoIdFor('race'),
  empty: videoIdFor('empty'),
};

beforeAll(async () => {
  db = await createTestDatabase();
  await addVideos(db.sql, channelId, [
    { videoId: ids.versions },
    { videoId: ids.flags },
    { videoId: ids.choice, language: 'en' },
    { videoId: ids.german, language: 'de' },
    { videoId: ids.states },
    { videoId: ids.race },
    { videoId: ids.empty },
  ]);
});

afterAll(async () => {
  await db?.drop();
});

const rows = (videoId: string) =>
  db.sql<{ version: number; source: string; contentHash: string; lastSeenAt: Date; cues: unknown }[]>`
    select version, source, content_hash as "contentHash", last_seen_at as "lastSeenAt", cues from subtitle_tracks where video_id = ${videoId} order by version`;

const videoObject = async (videoId: string) =>
  (
    await db.sql<
      { video: VideoObject }[]
    >`select ${db.sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id where v.video_id = ${videoId}`
  )[0]!.video;

describe('track versions', () => {
  const words = ['Welcome back to the workshop.', 'Today we restore a lathe.', 'Let us begin.'];

  it('stores new content as version 1 and the same content again as nothing new', async () => {
    const first = await addTrack(db.sql, { videoId: ids.versions, language: 'en', kind: 'manual', text: vttOf(words), formatHint: 'vtt' });
    expect(first).toMatchObject({ created: true, track: { version: 1, format: 'vtt', cueCount: 3, source: 'archive' } });
    const before = (await rows(ids.versions))[0]!.lastSeenAt;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await addTrack(db.sql, { videoId: ids.versions, language: 'en', kind: 'manual', text: vttOf(words), source: 'youtube' });
    expect(again).toMatchObject({ created: false, track: { version: 1, source: 'archive' } });
    // The same words at the same times in another format are the same content.
    const asSrt = await addTrack(db.sql, { videoId: ids.versions, language: 'en', kind: 'manual', text: srtOf(words), formatHint: 'srt' });
    const asJson3 = await addTrack(db.sql, { videoId: ids.versions, language: 'en', kind: 'manual', text: json3Of(words) });
    expect(asSrt!.created).toBe(false);
    expect(asJson3!.created).toBe(false);
    const stored = await rows(ids.versions);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.lastSeenAt.getTime()).toBeGreaterThan(before.getTime());
  });

  it('keeps a changed track as version 2 and leaves version 1 as it was', async () => {
    const [v1] = await rows(ids.versions);
    const changed = [...words.slice(0, 2), 'Let us begin, carefully.'];
    const second = await addTrack(db.sql, {
      videoId: ids.versions,
      language: 'en',
      kind: 'manual',
      text: vttOf(changed),
      source: 'youtube',
    });
    expect(second).toMatchObject({ created: true, track: { version: 2, source: 'youtube' } });
    const stored = await rows(ids.versions);
    expect(stored.map((row) => row.version)).toEqual([1, 2]);
    expect(stored[0]!.cues).toEqual(v1!.cues);
    expect(stored[0]!.contentHash).toBe(v1!.contentHash);
    const latest = await latestTracks(db.sql, [ids.versions]);
    expect(latest).toHaveLength(1);
    expect(latest[0]!.version).toBe(2);
    const cues = await readCues(db.sql, [latest[0]!.id]);
    expect(cues.get(latest[0]!.id)!.at(-1)!.text).toBe('Let us begin, carefully.');
    // Going back to the first content is not a new version: that content is stored already.
    const back = await addTrack(db.sql, { videoId: ids.versions, language: 'en', kind: 'manual', text: vttOf(words) });
    expect(back!.created).toBe(false);
    expect((await rows(ids.versions)).length).toBe(2);
  });

  it('counts versions per language and kind', async () => {
    const auto = await addTrack(db.sql, {
      videoId: ids.versions,
      language: 'en',
      kind: 'auto',
      text: vttOf(['welcome back to the workshop']),
    });
    const german = await addTrack(db.sql, { videoId: ids.versions, language: 'de', kind: 'manual', text: vttOf(['Willkommen zurück']) });
    expect(auto!.track.version).toBe(1);
    expect(german!.track.version).toBe(1);
    expect((await latestTracks(db.sql, [ids.versions])).map((track) => `${track.language}/${track.kind}/v${track.version}`)).toEqual([
      'de/manual/v1',
      'en/auto/v1',
      'en/manual/v2',
    ]);
  });

  it('numbers concurrent new versions 1, 2, 3… without gaps or collisions', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        addTrack(db.sql, { videoId: ids.race, language: 'en', kind: 'auto', text: vttOf([`take ${i}`]) }),
      ),
    );
    expect(results.every((result) => result!.created)).toBe(true);
    expect((await rows(ids.race)).map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('refuses text in no subtitle format and stores nothing for a file without cues', async () => {
    await expect(addTrack(db.sql, { videoId: ids.empty, language: 'en', kind: 'manual', text: 'just some words' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(() => prepareTrack({ videoId: ids.empty, language: 'en us', kind: 'manual', source: 'archive', text: vttOf(['x']) })).toThrow(
      AppError,
    );
    expect(await addTrack(db.sql, { videoId: ids.empty, language: 'en', kind: 'manual', text: 'WEBVTT\n\n' })).toBeUndefined();
    expect(await rows(ids.empty)).toHaveLength(0);
  });

  it('hashes normalised cues: roll-up duplication and markup do not make a new version', () => {
    const plain = prepareTrack({
      videoId: ids.empty,
      language: 'en',
      kind: 'auto',
      source: 'archive',
      text: vttOf(['hello there', 'general kenobi']),
    })!;
    const tagged = prepareTrack({
      videoId: ids.empty,
      language: 'en',
      kind: 'auto',
      source: 'archive',
      text: 'WEBVTT\n\n00:00:00.000 --> 00:00:03.000\n<c>hello</c> <i>there</i>\n\n00:00:03.000 --> 00:00:06.000\ngeneral &#107;enobi\n',
    })!;
    expect(tagged.contentHash).toBe(plain.contentHash);
    expect(contentHash(plain.cues)).toMatch(/^[0-9a-f]{64}$/);
    expect(plain.textBytes).toBe(Buffer.byteLength('hello there\ngeneral kenobi\n'));
    expect(plain.durationMs).toBe(6000);
  });
});

describe('hasSubtitles and the video object', () => {
  it('is false without tracks, true once one is stored, false again when they are gone; captions list the tracks', async () => {
    await db.sql`update videos set caption_languages = '[{"language": "fr", "kind": "auto"}]' where video_id = ${ids.flags}`;
    expect(await videoObject(ids.flags)).toMatchObject({ hasSubtitles: false, captions: [{ language: 'fr', kind: 'auto' }] });
    await addTrack(db.sql, { videoId: ids.flags, language: 'en', kind: 'manual', text: vttOf(['one']) });
    await addTrack(db.sql, { videoId: ids.flags, language: 'es', kind: 'translated', text: vttOf(['uno']) });
    const video = await videoObject(ids.flags);
    expect(video.hasSubtitles).toBe(true);
    expect(video.captions).toEqual(
      expect.arrayContaining([
        { language: 'fr', kind: 'auto' },
        { language: 'en', kind: 'manual' },
        { language: 'es', kind: 'translated' },
      ]),
    );
    expect(video.captions).toHaveLength(3);
    // A second version of a track adds no caption entry.
    await addTrack(db.sql, { videoId: ids.flags, language: 'en', kind: 'manual', text: vttOf(['one, two']) });
    expect((await videoObject(ids.flags)).captions).toHaveLength(3);
    await db.sql`delete from subtitle_tracks where video_id = ${ids.flags}`;
    expect((await videoObject(ids.flags)).hasSubtitles).toBe(false);
  });

  it('an unchanged video keeps its updated_at when a new version changes nothing it shows', async () => {
    const [before] = await db.sql<{ updatedAt: Date }[]>`select updated_at as "updatedAt" from videos where video_id = ${ids.versions}`;
    await addTrack(db.sql, { videoId: ids.versions, language: 'en', kind: 'manual', text: vttOf(['a third version']) });
    const [after] = await db.sql<{ updatedAt: Date }[]>`select updated_at as "updatedAt" from videos where video_id = ${ids.versions}`;
    expect(after!.updatedAt.getTime()).toBe(before!.updatedAt.getTime());
  });
});

describe('choosing the transcript', () => {
  const track = (language: string, kind: TrackInfo['kind']) => ({ language, kind });

  it("puts a language's unnamed track before its named ones, and takes a named one by its id", () => {
    const named = { language: 'en', kind: 'manual' as const, trackId: 'uYU-mmqFLq8' };
    const unnamed = { language: 'en', kind: 'manual' as const, trackId: null };
    expect(chooseTrack([named, unnamed])).toEqual(unnamed);
    expect(chooseTrack([named, unnamed], { lang: 'en' })).toEqual(unnamed);
    expect(chooseTrack([named, unnamed], { lang: 'en', trackId: 'uYU-mmqFLq8' })).toEqual(named);
    expect(chooseTrack([unnamed], { trackId: 'uYU-mmqFLq8' })).toBeUndefined();
  });

  it('prefers manual over auto over translated, then the video language, then English, then the first', () => {
    expect(chooseTrack([track('en', 'auto'), track('fr', 'manual')])).toEqual(track('fr', 'manual'));
    expect(chooseTrack([track('de', 'manual'), track('en', 'manual'), track('fr', 'manual')], { videoLanguage: 'fr' })).toEqual(
      track('fr', 'manual'),
    );
    expect(chooseTrack([track('de', 'manual'), track('en-GB', 'manual'), track('fr', 'manual')], { videoLanguage: 'ja' })).toEqual(
      track('en-GB', 'manual'),
    );
    expect(chooseTrack([track('en-GB', 'manual'), track('en', 'manual')])).toEqual(track('en', 'manual'));
    expect(chooseTrack([track('pt', 'auto'), track('de', 'auto')])).toEqual(track('de', 'auto'));
    expect(chooseTrack([track('es', 'translated'), track('de', 'auto')])).toEqual(track('de', 'auto'));
    expect(chooseTrack([track('es', 'translated')])).toEqual(track('es', 'translated'));
    expect(chooseTrack([])).toBeUndefined();
  });

  it('filters by lang (exact before regional) and kind', () => {
    const tracks = [track('en', 'auto'), track('en-GB', 'manual'), track('de', 'manual')];
    expect(chooseTrack(tracks, { lang: 'en' })).toEqual(track('en', 'auto'));
    expect(chooseTrack(tracks, { lang: 'EN-gb' })).toEqual(track('en-GB', 'manual'));
    expect(chooseTrack(tracks, { lang: 'en', kind: 'manual' })).toEqual(track('en-GB', 'manual'));
    expect(chooseTrack(tracks, { kind: 'auto' })).toEqual(track('en', 'auto'));
    expect(chooseTrack(tracks, { lang: 'fr' })).toBeUndefined();
    expect(chooseTrack(tracks, { kind: 'translated' })).toBeUndefined();
  });

  it('completes with the best track and follows its newest version', async () => {
    await addTrack(db.sql, { videoId: ids.choice, language: 'en', kind: 'auto', text: vttOf(['auto words']) });
    let { transcript } = await db.sql.begin((tx) => refreshTranscript(tx, ids.choice, { checked: true }));
    expect(transcript).toMatchObject({ state: 'completed', language: 'en', kind: 'auto', version: 1 });
    await addTrack(db.sql, { videoId: ids.choice, language: 'en', kind: 'manual', text: vttOf(['manual words']) });
    ({ transcript } = await db.sql.begin((tx) => refreshTranscript(tx, ids.choice)));
    expect(transcript).toMatchObject({ state: 'completed', language: 'en', kind: 'manual', version: 1 });
    await addTrack(db.sql, { videoId: ids.choice, language: 'en', kind: 'manual', text: vttOf(['manual words, corrected']) });
    ({ transcript } = await db.sql.begin((tx) => refreshTranscript(tx, ids.choice)));
    expect(transcript).toMatchObject({ state: 'completed', kind: 'manual', version: 2 });
  });

  it("prefers the video's own language", async () => {
    await addTrack(db.sql, { videoId: ids.german, language: 'en', kind: 'manual', text: vttOf(['hello']) });
    await addTrack(db.sql, { videoId: ids.german, language: 'de', kind: 'manual', text: vttOf(['hallo']) });
    const { transcript } = await db.sql.begin((tx) => refreshTranscript(tx, ids.german));
    expect(transcript).toMatchObject({ state: 'completed', language: 'de' });
  });

  it('moves through none, pending, none/failed and completed', async () => {
    expect((await readTranscript(db.sql, ids.states)).state).toBe('none');
    await db.sql.begin((tx) => markTranscriptsPending(tx, [ids.states]));
    expect((await readTranscript(db.sql, ids.states)).state).toBe('pending');
    // A fetch that will try again leaves it pending.
    await db.sql.begin((tx) => refreshTranscript(tx, ids.states, { checked: false }));
    expect((await readTranscript(db.sql, ids.states)).state).toBe('pending');
    await db.sql.begin((tx) => refreshTranscript(tx, ids.states, { checked: true, failure: 'youtube: bot check' }));
    expect(await readTranscript(db.sql, ids.states)).toMatchObject({ state: 'failed', error: 'youtube: bot check' });
    await db.sql.begin((tx) => markTranscriptsPending(tx, [ids.states]));
    await db.sql.begin((tx) => refreshTranscript(tx, ids.states, { checked: true }));
    const none = await readTranscript(db.sql, ids.states);
    expect(none).toMatchObject({ state: 'none', error: null });
    expect(none.checkedAt).toBeInstanceOf(Date);
    await addTrack(db.sql, { videoId: ids.states, language: 'en', kind: 'auto', text: vttOf(['found']) });
    await db.sql.begin((tx) => refreshTranscript(tx, ids.states, { checked: true }));
    expect((await readTranscript(db.sql, ids.states)).state).toBe('completed');
    // Asking again does not make a completed transcript pending.
    await db.sql.begin((tx) => markTranscriptsPending(tx, [ids.states]));
    expect((await readTranscript(db.sql, ids.states)).state).toBe('completed');
  });
});

describe('matching a query in cues', () => {
  const cues = ['We restore the old Lathe.', 'Café au lait, über alles', 'and then the bridge', 'collapsed into the river'].map(
    (text, i) => ({ startMs: i * 1000, endMs: i * 1000 + 1000, text }),
  );

  it('ignores case and accents', () => {
    expect(foldText('Café ÜBER')).toBe('cafe uber');
    expect(matchCues(cues, 'lathe')).toEqual([0]);
    expect(matchCues(cues, 'CAFE')).toEqual([1]);
    expect(matchCues(cues, 'Über')).toEqual([1]);
    expect(matchCues(cues, 'the')).toEqual([0, 2, 3]);
  });

  it('finds a phrase across two cues and marks both', () => {
    expect(matchCues(cues, 'bridge collapsed')).toEqual([2, 3]);
    expect(matchCues(cues, 'the  bridge\n')).toEqual([2]);
  });

  it('finds nothing for an absent or empty query', () => {
    expect(matchCues(cues, 'spaceship')).toEqual([]);
    expect(matchCues(cues, '   ')).toEqual([]);
  });
});
