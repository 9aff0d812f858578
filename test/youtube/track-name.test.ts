import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { languageTag } from '../../core/text/languageTag.ts';
import { captionTrackOf } from '../../core/youtube/captionTrack.ts';
import { readTrackNames } from '../../core/youtube/infoJsonTracks.ts';
import { parseTrackName } from '../../core/youtube/trackName.ts';
import { itReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';

// yt-dlp's names of caption tracks (file names, info.json keys) and YouTube's captionTracks, split
// into a BCP 47 language and a named track's id, over the names real dumps hold.

const readJson = async (relative: string) => JSON.parse(await readFile(realFixture(relative), 'utf8')) as Record<string, unknown>;

describe('languageTag', () => {
  it("accepts BCP 47 tags as ICU parses them, in the RFC's case, keeping the platform's deprecated codes", () => {
    expect(['en', 'EN-gb', 'pt-br', 'zh-hans', 'es-419', 'fil', 'iw', 'yue', 'sr-latn-rs'].map(languageTag)).toEqual([
      'en',
      'en-GB',
      'pt-BR',
      'zh-Hans',
      'es-419',
      'fil',
      'iw',
      'yue',
      'sr-Latn-RS',
    ]);
  });

  it('refuses what is no tag: a named track glued on, yt-dlp prefixes, underscores, chat replays', () => {
    for (const name of ['en-uYU-mmqFLq8', 'a-en', 'en_US', 'live_chat', '', 'en-', 'x-private', 'en-US-orig'])
      expect(languageTag(name)).toBeUndefined();
  });
});

describe('parseTrackName', () => {
  it('splits a named track: the language, then the 11-character id yt-dlp appends (the real file name of a CART track)', () => {
    // lattifai-benchmark/DQacCB9tDaw.en-uYU-mmqFLq8.vtt
    expect(parseTrackName('en-uYU-mmqFLq8')).toEqual({ language: 'en', trackId: 'uYU-mmqFLq8' });
    expect(parseTrackName('pt-BR-uYU-mmqFLq8')).toEqual({ language: 'pt-BR', trackId: 'uYU-mmqFLq8' });
    expect(parseTrackName('en-uYU-mmqFLq8', { languageCode: 'en' })).toEqual({ language: 'en', trackId: 'uYU-mmqFLq8' });
  });

  it('decides a track id by its length, not by its syntax: one that reads as region and variant is still a track id', () => {
    // en-GB-abcdefgh is a well-formed tag; yt-dlp's name of the track GB-abcdefgh of en is the same string.
    expect(languageTag('en-GB-abcdefgh')).toBe('en-GB-abcdefgh');
    expect(parseTrackName('en-GB-abcdefgh')).toEqual({ language: 'en', trackId: 'GB-abcdefgh' });
    // What the platform says the language is decides first.
    expect(parseTrackName('en-GB-abcdefgh', { languageCode: 'en-GB-abcdefgh' })).toEqual({ language: 'en-GB-abcdefgh', trackId: null });
  });

  it("reads yt-dlp's other names: -orig is the language's speech track, <target>-<manual name> a translation", () => {
    expect(parseTrackName('en-orig')).toEqual({ language: 'en', trackId: null });
    const manualNames = ['en', 'de-DE', 'en-uYU-mmqFLq8'];
    expect(parseTrackName('de-en', { manualNames })).toEqual({ language: 'de', trackId: null });
    expect(parseTrackName('fr-de-DE', { manualNames })).toEqual({ language: 'fr', trackId: null });
    expect(parseTrackName('zh-Hans-en', { manualNames })).toEqual({ language: 'zh-Hans', trackId: null });
    expect(parseTrackName('fr-en-uYU-mmqFLq8', { manualNames })).toEqual({ language: 'fr', trackId: null });
  });

  it("keeps YouTube's own codes whole and leaves out what is no caption language", () => {
    for (const code of ['en', 'en-GB', 'pt-BR', 'zh-Hans', 'zh-Hant', 'es-419', 'iw', 'fil', 'pt-PT'])
      expect(parseTrackName(code)).toEqual({ language: code, trackId: null });
    expect(parseTrackName('live_chat')).toBeUndefined();
    expect(parseTrackName('a-en')).toBeUndefined();
  });

  itReal('reads every name of real info.json dumps as a language and no name as a track id', async () => {
    for (const file of [
      'peace/video_basic.json',
      'peace/video_with_subs.json',
      'tubesync/metadata_2023-06-29.json',
      'pinchflat/media_metadata.json',
    ]) {
      const info = await readJson(file);
      const names = [...Object.keys(info.subtitles as object), ...Object.keys(info.automatic_captions as object)];
      const tracks = readTrackNames(info, names);
      expect(tracks.map((track) => track.name)).toEqual(names);
      for (const track of tracks) {
        expect(languageTag(track.language), `${file}: ${track.name}`).toBe(track.language);
        expect(track.trackId, `${file}: ${track.name}`).toBeNull();
      }
    }
  });

  itReal("reads a real dump's manual, auto, original and translated names as yt-dlp meant them", async () => {
    const info = await readJson('peace/video_basic.json');
    const read = (name: string) => readTrackNames(info, [name])[0];
    expect(read('de-DE')).toEqual({ name: 'de-DE', language: 'de-DE', trackId: null, kind: 'manual' });
    expect(read('en-orig')).toEqual({ name: 'en-orig', language: 'en', trackId: null, kind: 'auto' });
    // Translations of the manual en and de-DE tracks (their URLs ask for tlang=), and of the speech track.
    expect(read('de-en')).toEqual({ name: 'de-en', language: 'de', trackId: null, kind: 'translated' });
    expect(read('fr-de-DE')).toEqual({ name: 'fr-de-DE', language: 'fr', trackId: null, kind: 'translated' });
    expect(read('fr')).toEqual({ name: 'fr', language: 'fr', trackId: null, kind: 'translated' });
    expect(readTrackNames(info, ['live_chat', 'rechat'])).toEqual([]);
  });

  it('reads a named track an info.json lists by its timedtext URL (lang=), and without an info.json by its name', () => {
    const info = {
      subtitles: {
        'en-uYU-mmqFLq8': [{ ext: 'vtt', url: 'https://www.youtube.com/api/timedtext?v=DQacCB9tDaw&lang=en&fmt=vtt', name: 'English' }],
      },
    };
    expect(readTrackNames(info, ['en-uYU-mmqFLq8'])).toEqual([
      { name: 'en-uYU-mmqFLq8', language: 'en', trackId: 'uYU-mmqFLq8', kind: 'manual' },
    ]);
    expect(readTrackNames(undefined, ['en-uYU-mmqFLq8'])).toEqual([
      { name: 'en-uYU-mmqFLq8', language: 'en', trackId: 'uYU-mmqFLq8', kind: 'auto' },
    ]);
  });
});

describe('captionTrackOf', () => {
  itReal("reads a player response's captionTracks: languageCode, and asr or a. as speech recognition", async () => {
    const player = await readJson('youtube-transcript-api/youtube.innertube.json.static');
    const tracks = (player.captions as { playerCaptionsTracklistRenderer: { captionTracks: Array<Record<string, unknown>> } })
      .playerCaptionsTracklistRenderer.captionTracks;
    const read = tracks.map(captionTrackOf);
    expect(read.every((track) => track && track.trackId === null && languageTag(track.language) === track.language)).toBe(true);
    expect(read.filter((track) => track?.kind === 'auto').map((track) => track!.language)).toEqual(['en']);
  });

  it("reads a named track's id from its vssId", () => {
    // The shape Invidious documents for a named caption track.
    expect(
      captionTrackOf({ vssId: '.en.eEY6OEpapPo', languageCode: 'en', baseUrl: 'https://www.youtube.com/api/timedtext?lang=en' }),
    ).toEqual({
      language: 'en',
      trackId: 'eEY6OEpapPo',
      kind: 'manual',
    });
    expect(captionTrackOf({ vssId: 'a.en', languageCode: 'en', kind: 'asr' })).toEqual({ language: 'en', trackId: null, kind: 'auto' });
    expect(captionTrackOf({ vssId: '.x', languageCode: 'live_chat' })).toBeUndefined();
  });
});
