import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Cue } from '../../core/subtitles/cue.ts';
import { normaliseCues } from '../../core/subtitles/normaliseCues.ts';
import { parse } from '../../core/subtitles/parse.ts';
import { parseSrt } from '../../core/subtitles/parseSrt.ts';
import { parseVtt } from '../../core/subtitles/parseVtt.ts';
import { renderSrt } from '../../core/subtitles/renderSrt.ts';
import { renderText } from '../../core/subtitles/renderText.ts';
import { renderVtt } from '../../core/subtitles/renderVtt.ts';

// Pieces that are markup, escapes or structure in one format or another, mixed with any unicode.
const tricky = fc.constantFrom(
  '-->',
  '--&gt;',
  '&',
  '<',
  '>',
  '&amp;',
  '&lt;',
  '&#39;',
  '&#x1F600;',
  '&nbsp;',
  '<i>',
  '</i>',
  '<c.red>',
  '<00:00:01.000>',
  '<v Bob>',
  '>>',
  '>> ',
  ' ',
  '  ',
  '\t',
  '\u00a0',
  '42',
  '00:00:01,000 --> 00:00:02,000',
  'NOTE',
  'STYLE',
  'WEBVTT',
  'NAME:',
  '[APPLAUSE]',
  ';',
  '#',
);
const piece = fc.oneof(
  { arbitrary: tricky, weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 4 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }), weight: 1 },
);
// A line holds no line break and is not blank: the text of a cue is "blank-line free". Nor a NUL: cue
// text never holds one (it is sanitised as it comes in: Postgres cannot store it), and WebVTT's parser
// reads a NUL as U+FFFD (test/subtitles/vtt-standard.test.ts).
const line = fc
  .array(piece, { minLength: 1, maxLength: 6 })
  .map((pieces) => pieces.join('').replace(/[\r\n\u0000]/g, ''))
  .filter((text) => text.trim() !== '');
const text = fc.array(line, { maxLength: 4 }).map((lines) => lines.join('\n'));
const ms = fc.oneof(fc.nat({ max: 10_000 }), fc.nat({ max: 400 * 3_600_000 }));
const rawCue: fc.Arbitrary<Cue> = fc.record({ startMs: ms, endMs: ms, text });
const anyCue: fc.Arbitrary<Cue> = fc
  .record({ startMs: ms, endMs: ms, text, speakerChange: fc.boolean() })
  .map(({ speakerChange, ...cue }) => (speakerChange ? { ...cue, speakerChange } : cue));
const cueList = (cue: fc.Arbitrary<Cue>) => fc.array(cue, { maxLength: 12 });

// Cues one after another with tiny gaps and durations and few distinct lines, so that repeats,
// echoes, transition cues and speaker markers meet often.
const fewLines = fc
  .array(fc.constantFrom('A', 'B', '>> A', '>>', 'A B', ' A ', '[APPLAUSE]'), { maxLength: 3 })
  .map((lines) => lines.join('\n'));
const rollingList = fc
  .array(fc.record({ gap: fc.nat({ max: 30 }), duration: fc.nat({ max: 80 }), text: fewLines, speakerChange: fc.boolean() }), {
    maxLength: 12,
  })
  .map((steps) => {
    let t = 0;
    return steps.map(({ gap, duration, text, speakerChange }): Cue => {
      t += gap;
      const cue = { startMs: t, endMs: t + duration, text, ...(speakerChange ? { speakerChange } : {}) };
      t += duration;
      return cue;
    });
  });

describe('codec round trip', () => {
  it('SRT gives back the cues it was given, text exactly', () => {
    fc.assert(
      fc.property(cueList(rawCue), (cues) => {
        expect(parseSrt(renderSrt(cues))).toEqual(cues);
      }),
      { numRuns: 500 },
    );
  });

  it('WebVTT gives back the cues it was given, text exactly', () => {
    fc.assert(
      fc.property(cueList(rawCue), (cues) => {
        expect(parseVtt(renderVtt(cues))).toEqual(cues);
      }),
      { numRuns: 500 },
    );
  });
});

describe('normalised round trip', () => {
  it('parse(render(cues)) is cues for normalised cues, in SRT and WebVTT', () => {
    fc.assert(
      fc.property(cueList(anyCue), (raw) => {
        const cues = normaliseCues(raw);
        expect(parse(renderSrt(cues), 'srt')).toEqual(cues);
        expect(parse(renderVtt(cues), 'vtt')).toEqual(cues);
      }),
      { numRuns: 500 },
    );
  });

  it('holds for cue lists full of repeats, echoes and speaker markers', () => {
    fc.assert(
      fc.property(rollingList, (raw) => {
        const cues = normaliseCues(raw);
        expect(normaliseCues(cues)).toEqual(cues);
        expect(parse(renderSrt(cues), 'srt')).toEqual(cues);
        expect(parse(renderVtt(cues), 'vtt')).toEqual(cues);
      }),
      { numRuns: 1000 },
    );
  });

  it('normalising twice changes nothing, and plain text has one line per cue', () => {
    fc.assert(
      fc.property(fc.oneof(cueList(anyCue), rollingList), (raw) => {
        const cues = normaliseCues(raw);
        expect(normaliseCues(cues)).toEqual(cues);
        for (const cue of cues) expect(cue.text).toMatch(/^\S(?:.*\S)?$/);
        const lines = renderText(cues).split('\n');
        expect(lines.pop()).toBe('');
        expect(lines).toHaveLength(cues.length);
      }),
      { numRuns: 500 },
    );
  });
});

// Roll-up as YouTube writes it: each cue shows the previous line and the new one, with a 10 ms
// transition cue between; the words come out once each, in order, whatever they are.
const word = fc.oneof(
  fc.constantFrom('no', 'yes', '[Music]', '&', '>>', 'a<b', 'so'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).filter((w) => !/\s/.test(w)),
);

function rollUp(lines: string[][]): string {
  const escapeXml = (w: string) => w.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const ts = (ms: number) => new Date(ms).toISOString().slice(11, 23);
  const blocks: string[] = [];
  let t = 0;
  let previous = ' ';
  for (const words of lines) {
    const timed = words.map((w, i) => (i === 0 ? escapeXml(w) : `<${ts(t + i * 100)}><c> ${escapeXml(w)}</c>`)).join('');
    blocks.push(`${ts(t)} --> ${ts(t + 2000)} align:start position:0%\n${previous}\n${timed}`);
    previous = words.map(escapeXml).join(' ');
    blocks.push(`${ts(t + 2000)} --> ${ts(t + 2010)} align:start position:0%\n${previous}\n `);
    t += 2010;
  }
  return `WEBVTT\nKind: captions\nLanguage: en\n\n${blocks.join('\n\n')}\n`;
}

describe('roll-up normalisation', () => {
  it('keeps every spoken word once, in order, even lines said twice', () => {
    const lines = fc.array(fc.array(word, { minLength: 1, maxLength: 7 }), { minLength: 1, maxLength: 20 });
    const withRepeats = lines.chain((ls) =>
      fc
        .array(fc.nat({ max: ls.length - 1 }), { maxLength: 3 })
        .map((at) => at.reduce((acc, i) => [...acc.slice(0, i + 1), acc[i]!, ...acc.slice(i + 1)], ls)),
    );
    fc.assert(
      fc.property(withRepeats, (ls) => {
        // A ">>" word may become a speaker change, so it is left out of the comparison.
        const spoken = ls.flat().filter((w) => w !== '>>');
        const words = parse(rollUp(ls)).flatMap((cue) => cue.text.split(' '));
        expect(words.filter((w) => w !== '>>')).toEqual(spoken);
      }),
      { numRuns: 300 },
    );
  });
});
