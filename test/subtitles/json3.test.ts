import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { parse } from '../../core/subtitles/parse.ts';
import { parseJson3 } from '../../core/subtitles/parseJson3.ts';

const autoCaptions = JSON.stringify({
  wireMagic: 'pb3',
  pens: [{}],
  events: [
    { tStartMs: 0, dDurationMs: 1209760, id: 1, wpWinPosId: 1, wsWinStyleId: 1 },
    {
      tStartMs: 80,
      dDurationMs: 3309,
      wWinId: 1,
      segs: [
        { utf8: 'when', acAsrConf: 0 },
        { utf8: ' I', tOffsetMs: 119 },
        { utf8: ' started', tOffsetMs: 200 },
      ],
    },
    { tStartMs: 1309, dDurationMs: 2080, wWinId: 1, aAppend: 1, segs: [{ utf8: '\n' }] },
    { tStartMs: 1319, dDurationMs: 3000, wWinId: 1, segs: [{ utf8: 'working' }, { utf8: ' on', tOffsetMs: 361 }] },
    { tStartMs: 5000, dDurationMs: 1000, segs: [{ utf8: '>> [Music]\nmore' }, {}] },
  ],
});

describe('parseJson3', () => {
  it('reads events with segments, skipping those without', () => {
    expect(parseJson3(autoCaptions)).toEqual([
      { startMs: 80, endMs: 3389, text: 'when I started' },
      { startMs: 1309, endMs: 3389, text: '\n' },
      { startMs: 1319, endMs: 4319, text: 'working on' },
      { startMs: 5000, endMs: 6000, text: '>> [Music]\nmore' },
    ]);
  });

  it('normalises: line-break events dropped, speaker changes marked', () => {
    expect(parse(autoCaptions)).toEqual([
      { startMs: 80, endMs: 3389, text: 'when I started' },
      { startMs: 1319, endMs: 4319, text: 'working on' },
      { startMs: 5000, endMs: 6000, text: '[Music] more', speakerChange: true },
    ]);
  });

  it('rejects JSON that is not json3 captions', () => {
    expect(() => parseJson3('{"events": 3}')).toThrow(AppError);
    expect(() => parseJson3('{"events": [')).toThrow(/not valid JSON/);
  });
});
