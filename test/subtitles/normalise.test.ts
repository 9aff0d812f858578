import { describe, expect, it } from 'vitest';
import type { Cue } from '../../core/subtitles/cue.ts';
import { normaliseCues } from '../../core/subtitles/normaliseCues.ts';

const cue = (startMs: number, endMs: number, text: string): Cue => ({ startMs, endMs, text });
const texts = (cues: Cue[]) => cues.map((c) => (c.speakerChange ? `>> ${c.text}` : c.text));

describe('normaliseCues', () => {
  it('keeps only new lines of roll-up captions, with or without transition cues', () => {
    const rolling = [
      cue(0, 1000, ' \nA b c'),
      cue(1000, 1010, 'A b c\n '),
      cue(1010, 2000, 'A b c\nd e f'),
      cue(2000, 2010, 'd e f'),
      cue(2010, 3000, 'd e f\ng h'),
      cue(3000, 4000, 'g h\ni'), // no transition cue
      cue(4000, 9000, 'i'), // scrolls off, held long
    ];
    expect(normaliseCues(rolling)).toEqual([cue(0, 1000, 'A b c'), cue(1010, 2000, 'd e f'), cue(2010, 3000, 'g h'), cue(3000, 4000, 'i')]);
  });

  it('keeps a first line that was never on screen before', () => {
    expect(texts(normaliseCues([cue(0, 1000, 'a\nb'), cue(1000, 2000, 'x\ny')]))).toEqual(['a b', 'x y']);
  });

  it('keeps genuine repeats: after a pause, even a short one', () => {
    const cues = [cue(0, 1000, '(MAKES NOISE)'), cue(15000, 16000, '(MAKES NOISE)'), cue(16000, 17000, 'No.'), cue(17100, 18000, 'No.')];
    expect(texts(normaliseCues(cues))).toEqual(['(MAKES NOISE)', '(MAKES NOISE)', 'No.', 'No.']);
  });

  it('merges consecutive cues of the same words without a pause between: the first start, the last end', () => {
    const cues = [cue(0, 1000, 'a'), cue(1000, 2000, 'No.'), cue(2000, 3500, 'No.'), cue(3000, 4000, ' No. '), cue(4000, 5000, 'b')];
    expect(normaliseCues(cues)).toEqual([cue(0, 1000, 'a'), cue(1000, 4000, 'No.'), cue(4000, 5000, 'b')]);
    // A speaker change is part of what a cue says: the same words by someone else stay apart.
    expect(normaliseCues([cue(0, 1000, 'No.'), cue(1000, 2000, '>> No.')])).toEqual([
      cue(0, 1000, 'No.'),
      { ...cue(1000, 2000, 'No.'), speakerChange: true },
    ]);
  });

  it('collapses whitespace and drops empty cues', () => {
    expect(normaliseCues([cue(0, 1000, '  a\t\u00a0b \n\n c  '), cue(1000, 2000, ' \n\t'), cue(2000, 3000, '')])).toEqual([
      cue(0, 1000, 'a b c'),
    ]);
  });

  it('marks speaker changes at line starts, keeping the NAME: label, and splits cues at them', () => {
    const cues = normaliseCues([
      cue(0, 1000, '>> MIRA MURATI: Hi everyone.'),
      cue(1000, 2000, 'Thank you.\n>>MARK: Hello\nthere'),
      cue(2000, 3000, 'a >> b'),
    ]);
    expect(cues).toEqual([
      { startMs: 0, endMs: 1000, text: 'MIRA MURATI: Hi everyone.', speakerChange: true },
      { startMs: 1000, endMs: 2000, text: 'Thank you.' },
      { startMs: 1000, endMs: 2000, text: 'MARK: Hello there', speakerChange: true },
      { startMs: 2000, endMs: 3000, text: 'a >> b' },
    ]);
  });

  it('gives a lone ">>" to the words that follow', () => {
    expect(normaliseCues([cue(0, 1000, 'a\n>>'), cue(1000, 2000, 'b')])).toEqual([
      cue(0, 1000, 'a'),
      { ...cue(1000, 2000, 'b'), speakerChange: true },
    ]);
  });

  it('keeps sound descriptions as text', () => {
    expect(texts(normaliseCues([cue(0, 1000, '[APPLAUSE]'), cue(1000, 2000, '(YAWNS)'), cue(2000, 3000, '♪ la la ♪')]))).toEqual([
      '[APPLAUSE]',
      '(YAWNS)',
      '♪ la la ♪',
    ]);
  });

  it('orders cues by start time and mends an end before the start', () => {
    expect(normaliseCues([cue(5000, 6000, 'b'), cue(0, 1000, 'a'), cue(7000, 6500, 'c')])).toEqual([
      cue(0, 1000, 'a'),
      cue(5000, 6000, 'b'),
      cue(7000, 7000, 'c'),
    ]);
  });

  it('leaves normalised cues as they are', () => {
    const once = normaliseCues([cue(0, 1000, 'x\n>> A'), cue(1000, 1005, '>> A'), cue(1005, 1010, 'A\nA'), cue(1010, 3000, 'q\nr')]);
    expect(
      normaliseCues(
        once
          .map((c) => ({ ...c, text: c.speakerChange ? `>> ${c.text}` : c.text, speakerChange: undefined }))
          .map(({ speakerChange: _, ...c }) => c),
      ),
    ).toEqual(once);
  });
});
