import { readFileSync } from 'node:fs';
import stopwordsIso from 'stopwords-iso/stopwords-iso.json' with { type: 'json' };
import { expect, it } from 'vitest';
import { parse } from '../../core/subtitles/parse.ts';
import { buildUnits } from '../../core/summaries/offline/buildUnits.ts';
import { createExtractiveGenerator } from '../../core/summaries/offline/createExtractiveGenerator.ts';
import { spokenCues } from '../../core/subtitles/stageDirections.ts';
import { createTokeniser } from '../../core/text/tokenise.ts';
import { summaryContent } from '../../core/summaries/summary.ts';
import type { TranscriptCue } from '../../core/subtitles/transcriptCue.ts';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';
import { evaluateGenerator } from '../kit/summaryEvaluation.ts';

// Real caption files (SOURCES.md section 2 of the real fixtures), read with the project's codec,
// summarised by the offline generator. The language is the one the file names and declares.

const CAPTIONS = [
  { file: 'lattifai-benchmark/DQacCB9tDaw.en-uYU-mmqFLq8.vtt', language: 'en', kind: 'manual' },
  { file: 'vtt-rs/test.vtt', language: 'en', kind: 'auto' },
  { file: 'wrolpi/example1.en.vtt', language: 'en', kind: 'auto' },
  { file: 'wrolpi/example3.en.srt', language: 'en', kind: 'auto' },
  { file: 'youtube-captions-dataset-parser/subs.ru.vtt', language: 'ru', kind: 'manual' },
  { file: 'youtube-captions-dataset-parser/test/subs.ru.vtt', language: 'ru', kind: 'auto' },
] as const;

/** The file's cues as the pipeline hands them to a generator: seconds, one line of text. */
function transcript(file: string): TranscriptCue[] {
  const cues = parse(readFileSync(realFixture(file), 'utf8'), file.split('.').at(-1));
  return cues.map((cue) => ({ start: cue.startMs / 1000, end: cue.endMs / 1000, text: cue.text }));
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
const generator = createExtractiveGenerator();

describeReal('offline summaries of real captions', () => {
  for (const { file, language, kind } of CAPTIONS) {
    it(`${file} (${language}, ${kind}): valid, in its language, key points where their words are said`, async () => {
      const cues = transcript(file);
      // Detected from the text alone, and the same with the track's language as a hint.
      const summary = await generator.summarise({ videoId: 'x', title: null, language: null, cues });
      expect(summary.language).toBe(language);
      expect((await generator.summarise({ videoId: 'x', title: null, language, cues })).language).toBe(language);
      expect(summaryContent.safeParse(summary).success).toBe(true);
      expect(summary.llmModel).toBe('afterimage-extractive-1');

      const starts = summary.keyPoints.map((point) => point.startSeconds);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      for (const point of summary.keyPoints) {
        const said = words(point.text);
        // A cue on screen at startSeconds says the point's first word, and shares its words.
        const first = [...said][0]!;
        const at = cues.filter((cue) => Math.floor(cue.start) <= point.startSeconds && point.startSeconds <= cue.end);
        expect(
          at.some((cue) => words(cue.text).has(first)),
          `"${point.text}" at ${point.startSeconds}s`,
        ).toBe(true);
        expect(point.text).not.toMatch(/\[|♪|APPLAUSE/);
      }

      const stopwords = new Set((stopwordsIso as Record<string, string[]>)[language]);
      for (const tag of summary.tags) for (const word of tag.split(/[\s-]+/)) expect(stopwords.has(word), tag).toBe(false);
    });
  }

  // The evaluation set (test/kit/summaryReferences.ts): tags and key moments written by hand. Before
  // issue 31.5 the generator scored 0.61 and 0.48; the summaries benchmark reports both.
  it('tags what a person would tag and has a key point for most of the moments a person would note', async () => {
    const evaluation = await evaluateGenerator(generator);
    expect(evaluation.tagPrecision).toBeGreaterThanOrEqual(0.75);
    expect(evaluation.momentCoverage).toBeGreaterThanOrEqual(0.65);
    for (const score of evaluation.scores) expect(score.tagPrecision, score.file).toBeGreaterThanOrEqual(0.66);
  });

  it('cuts the auto captions into units of at most 40 words, at least 12 where there are enough', () => {
    for (const { file, language } of CAPTIONS.filter((caption) => caption.kind === 'auto')) {
      const units = buildUnits(spokenCues(transcript(file)), createTokeniser(language));
      const total = units.reduce((sum, unit) => sum + unit.words.length, 0);
      for (const unit of units) {
        expect(unit.words.length, file).toBeLessThanOrEqual(40);
        if (total >= 12) expect(unit.words.length, file).toBeGreaterThanOrEqual(12);
      }
    }
  });

  it('summarises a manual track of sound descriptions only (wrolpi/example2.en.vtt) as having no speech', async () => {
    const cues = transcript('wrolpi/example2.en.vtt');
    const summary = await generator.summarise({ videoId: 'x', title: null, language: 'en', cues });
    expect(summaryContent.safeParse(summary).success).toBe(true);
    expect(summary.tldr).toMatch(/no spoken words/);
    expect(summary.keyPoints.map((point) => point.text)).toEqual([
      '(YAWNS)',
      '(POETIC MUSIC)',
      '(MAKES NOISE)',
      '(EPIC MUSIC)',
      '(SCREAMS)',
    ]);
    expect(summary.keyPoints[0]!.startSeconds).toBe(50);
  });

  it('leaves the speaker labels and [APPLAUSE] of live captions out of tags and key points', async () => {
    const summary = await generator.summarise({
      videoId: 'DQacCB9tDaw',
      title: 'Introducing GPT-4o',
      language: 'en',
      cues: transcript('lattifai-benchmark/DQacCB9tDaw.en-uYU-mmqFLq8.vtt'),
    });
    expect(summary.title).toBe('Introducing GPT-4o');
    expect(summary.keyPoints.length).toBeGreaterThanOrEqual(8); // a 26-minute event
    expect(summary.tags).toContain('chatgpt');
    expect(summary.tags).not.toContain('applause');
    expect(summary.tags.some((tag) => /murati|mira/.test(tag))).toBe(false);
    expect(summary.keyPoints.some((point) => /^[A-Z ]+:/.test(point.text))).toBe(false);
  });
});
