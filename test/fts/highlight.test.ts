import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { highlighter } from '../../core/fts/highlight.ts';
import { parseQuery } from '../../core/fts/query.ts';

const words = ['com', 'the', 'to', 'a', 'www', 'https', 'Com', 'THE', 'tom', 'atom', '3d', 'x1'];

describe('highlighting', () => {
  it('marks whole words only, case aside', () => {
    const mark = highlighter(parseQuery('com the'));
    expect(mark('www.youtube.COM/the, comx theme THE<b>')).toBe('www.youtube.<mark>COM</mark>/<mark>the</mark>, comx theme <mark>THE</mark>&#60;b&#62;');
    expect(mark.matches('comma then')).toBe(false);
  });

  it('finds in ASCII text what it finds in any other (ASCII text takes a path of its own)', () => {
    // A dash of another script sends the same text down the path that folds word by word.
    const text = fc.array(fc.oneof(fc.constantFrom(...words), fc.constantFrom(' ', '.', '/', '-', '<', '&', '"', '', '1')), { maxLength: 30 }).map((parts) => parts.join(''));
    const query = fc.array(fc.constantFrom(...words.slice(0, 6), '"the com"'), { minLength: 1, maxLength: 3 }).map((parts) => parts.join(' '));
    fc.assert(
      fc.property(text, query, (t, q) => {
        const mark = highlighter(parseQuery(q));
        expect(mark(`${t} —`)).toBe(`${mark(t)} —`);
        expect(mark.matches(`${t} —`)).toBe(mark.matches(t));
      }),
      { numRuns: 500 },
    );
  });
});
