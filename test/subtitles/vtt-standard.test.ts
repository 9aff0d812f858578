import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSrt } from '../../core/subtitles/parseSrt.ts';
import { parseVtt } from '../../core/subtitles/parseVtt.ts';
import { parseTiming } from '../../core/subtitles/timestamps.ts';
import { webvttFileParsingCases } from './webvttStandardCases.ts';

describe('parseVtt against the standard’s parsing cases (web-platform-tests)', () => {
  it.each(webvttFileParsingCases)('$name', ({ input, cues, texts, times }) => {
    const parsed = parseVtt(input);
    expect(parsed).toHaveLength(cues);
    if (texts) expect(parsed.map((cue) => cue.text)).toEqual(texts);
    if (times) expect(parsed.map((cue) => [cue.startMs, cue.endMs])).toEqual(times);
  });
});

describe('timestamps (collect a WebVTT timestamp)', () => {
  it('reads what the standard reads, to the millisecond', () => {
    expect(parseTiming('00:00:01.000 --> 00:00:02.500', 'vtt')).toEqual({ startMs: 1000, endMs: 2500 });
    expect(parseTiming('59:59.999 --> 100:00:00.000 align:start', 'vtt')).toEqual({ startMs: 3_599_999, endMs: 360_000_000 });
    expect(parseTiming('\f00:01.000\f-->\f00:02.000\fline:0', 'vtt')).toEqual({ startMs: 1000, endMs: 2000 });
    // After the end's three fraction digits the cue settings begin, whatever they are.
    expect(parseTiming('00:01.000 --> 00:02.000x', 'vtt')).toEqual({ startMs: 1000, endMs: 2000 });
  });

  it('reads no time where a guess would be wrong', () => {
    for (const line of [
      '00:00:60.000 --> 00:01:00.000', // 60 seconds
      '00:60:00.000 --> 01:00:00.000', // 60 minutes
      '00:00.0000 --> 00:01.000', // four fraction digits
      '00:00.0 --> 00:01.000', // one fraction digit
      '00:00:01.0x00 --> 00:00:02.000', // garbage inside
      '00:00:01,000 --> 00:00:02,000', // SRT's comma in WebVTT
      '\v00:00:01.000 --> 00:00:02.000', // a vertical tab is no whitespace
    ])
      expect(parseTiming(line, 'vtt'), line).toBeUndefined();
  });

  it('reads the fixed form by offsets exactly as the standard’s steps read it', () => {
    // A leading space keeps a line off the fixed form's reading; the steps skip it and must agree.
    const digit = fc.constantFrom(...'0123456789');
    const field = fc.tuple(digit, digit).map((pair) => pair.join(''));
    const timestamp = fc
      .tuple(field, field, field, fc.constantFrom('.', ',', ':'), fc.tuple(digit, digit, digit))
      .map(([h, m, s, separator, ms]) => `${h}:${m}:${s}${separator}${ms.join('')}`);
    const after = fc.constantFrom('', ' align:start', '\tline:0', '0', 'x', '5 size:50%');
    fc.assert(
      fc.property(timestamp, timestamp, after, fc.constantFrom('vtt', 'srt' as const), (start, end, rest, format) => {
        const line = `${start} --> ${end}${rest}`;
        expect(parseTiming(line, format)).toEqual(parseTiming(` ${line}`, format));
      }),
      { numRuns: 3000 },
    );
  });

  it('reads SRT with the same rules, a comma or a dot before the milliseconds', () => {
    expect(parseTiming('00:00:01,000 --> 00:00:02.500 X1:10', 'srt')).toEqual({ startMs: 1000, endMs: 2500 });
    for (const line of ['00:00:60,000 --> 00:01:00,000', '00:00:01,25 --> 00:00:02,000', '00:00:01,0x0 --> 00:00:02,000'])
      expect(parseTiming(line, 'srt'), line).toBeUndefined();
    expect(parseSrt('1\n00:00:01,000 --> 00:00:02,000\nkept\n\n2\n00:00:02,5 --> 00:00:03,000\nlost\n').map((cue) => cue.text)).toEqual([
      'kept',
    ]);
  });
});
