import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createOfflineStenogramGenerator } from '../../core/stenograms/createOfflineStenogramGenerator.ts';
import type { GeneratedStenogram, StenogramCue } from '../../core/stenograms/stenogram.ts';
import { parse } from '../../core/subtitles/parse.ts';
import { clock } from '../../core/text/clock.ts';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';

// Real caption files (SOURCES.md section 2 of the real fixtures), read with the project's codec
// (parse runs normaliseCues: a ">>" becomes speakerChange), written by the offline generator.

/** The file's cues as the pipeline hands them to a generator: seconds, one line, the speaker flag. */
function transcript(file: string): StenogramCue[] {
  return parse(readFileSync(realFixture(file), 'utf8'), file.split('.').at(-1)).map((cue) => ({
    start: cue.startMs / 1000,
    end: cue.endMs / 1000,
    text: cue.text,
    ...(cue.speakerChange ? { speakerChange: true } : {}),
  }));
}

const TAG = /^\*\*\[(\d+(?::\d\d)+)\] (.+?):\*\* (.*)$/;
const paragraphs = (stenogram: GeneratedStenogram) =>
  stenogram.markdown
    .trimEnd()
    .split('\n\n')
    .slice(2)
    .flatMap((block) => {
      const match = TAG.exec(block);
      return match ? [{ time: match[1]!, speaker: match[2]!, text: match[3]!.replace(/\\(.)/g, '$1') }] : [];
    });
const generator = createOfflineStenogramGenerator();

describeReal('offline stenograms of real captions', () => {
  // 26 minutes of live (CART) captions: 109 speaker changes written as "&gt;&gt; MIRA MURATI:", [APPLAUSE], overlapping cue times.
  const CART = 'lattifai-benchmark/DQacCB9tDaw.en-uYU-mmqFLq8.vtt';

  it(`${CART}: every ">>" turn opens a paragraph tagged with the speaker its label names`, async () => {
    const cues = transcript(CART);
    const turns = cues.filter((cue) => cue.speakerChange);
    expect(turns).toHaveLength(109);
    const stenogram = await generator.generate({
      videoId: 'DQacCB9tDaw',
      title: 'Introducing GPT-4o',
      channelTitle: 'OpenAI',
      language: null,
      cues,
    });
    expect(stenogram.language).toBe('en');

    const written = paragraphs(stenogram);
    const expected = turns.map((cue) => ({
      time: clock(cue.start),
      speaker: /^([A-Z][A-Z. ]+):/.exec(cue.text)![1]!,
      first: cue.text.replace(/^[A-Z][A-Z. ]+:\s*/, '').split(' ')[0]!,
    }));
    // In order, each turn is a paragraph of its own starting with the turn's first word.
    let at = 0;
    for (const turn of expected) {
      while (at < written.length && !(written[at]!.time === turn.time && written[at]!.speaker === turn.speaker)) at++;
      expect(written[at], `the turn of ${turn.speaker} at ${turn.time}`).toBeDefined();
      expect(written[at]!.text.split(' ')[0]).toBe(turn.first);
    }
    expect(new Set(written.map((paragraph) => paragraph.speaker))).toEqual(
      new Set(['MIRA MURATI', 'BARRETT ZOPH', 'MARK CHEN', 'CHAT GPT']),
    );
    expect(stenogram.speakers).toBe(4);
    expect(stenogram.paragraphs).toBeGreaterThanOrEqual(109);
    expect(stenogram.markdown).not.toContain('>>');
    expect(stenogram.markdown).toContain('\n\n*[APPLAUSE]*\n\n');

    // The words are the captions' words once each, in order: without the labels and the sound descriptions.
    const said = cues.flatMap((cue) =>
      cue.text
        .replace(/^[A-Z][A-Z. ]+:\s*/, '')
        .replace(/\[[^\]]*\]/g, ' ')
        .split(/\s+/)
        .filter(Boolean),
    );
    expect(written.flatMap((paragraph) => paragraph.text.split(' '))).toEqual(said);
    expect(stenogram.words).toBeGreaterThan(3_000);
  });

  for (const { file, language, speaker } of [
    { file: 'vtt-rs/test.vtt', language: 'en', speaker: 'Speaker 1' },
    { file: 'wrolpi/example1.en.vtt', language: 'en', speaker: 'Speaker 1' },
    // The label in the transcript's language (issue 31.5).
    { file: 'youtube-captions-dataset-parser/subs.ru.vtt', language: 'ru', speaker: 'Спикер 1' },
  ]) {
    it(`${file}: no speaker marks, so one ${speaker}, every word once`, async () => {
      const cues = transcript(file);
      const stenogram = await generator.generate({ videoId: 'x', title: null, channelTitle: null, language: null, cues });
      expect(stenogram.language).toBe(language);
      expect(stenogram.speakers).toBe(1);
      const written = paragraphs(stenogram);
      expect(new Set(written.map((paragraph) => paragraph.speaker))).toEqual(new Set([speaker]));
      expect(written.flatMap((paragraph) => paragraph.text.split(' '))).toEqual(
        cues.flatMap((cue) => cue.text.split(/\s+/).filter(Boolean)),
      );
    });
  }
});
