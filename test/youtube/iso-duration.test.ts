import { describe, expect, it } from 'vitest';
import { parseIsoDuration } from '../../core/youtube/isoDuration.ts';

describe('parseIsoDuration', () => {
  it.each([
    ['PT1H2M3S', 3_723],
    ['P1W', 604_800],
    ['P1DT2H', 93_600],
    ['P1W2DT3H4M5S', 604_800 + 2 * 86_400 + 3 * 3_600 + 4 * 60 + 5],
    ['PT1.5S', 2],
    ['PT1,5S', 2],
    ['PT0.4S', 0],
    ['PT1,25M', 75],
    ['P0D', 0],
    ['PT0S', 0],
    [' pt4m13s ', 253],
  ])('%j is %j seconds', (input, seconds) => {
    expect(parseIsoDuration(input)).toBe(seconds);
  });

  it.each([
    ['P'],
    ['PT'],
    ['P1DT'],
    ['P1Y'],
    ['P1M'],
    ['PT1.S'],
    ['PT.5S'],
    ['1H'],
    ['PT1H2M3S extra'],
    ['4:13'],
    [''],
    [undefined],
    [null],
    [93],
  ])('%j is not a duration', (input) => {
    expect(parseIsoDuration(input)).toBeUndefined();
  });
});
