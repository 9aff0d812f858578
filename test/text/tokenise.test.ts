import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTokeniser } from '../../core/text/tokenise.ts';

/** What Intl.Segmenter finds: the reference the tokeniser's own reading of plain text must equal. */
const segmenterWords = (text: string) =>
  [...new Intl.Segmenter('en', { granularity: 'word' }).segment(text)]
    .filter((segment) => segment.isWordLike)
    .map(({ segment, index }) => ({ index, end: index + segment.length }));

const positions = (text: string) =>
  createTokeniser('en')
    .words(text)
    .map(({ index, end }) => ({ index, end }));

describe('createTokeniser', () => {
  it('finds in text of Latin letters, spaces and common punctuation exactly the words Intl.Segmenter finds', () => {
    const plain = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', 'q', "'", "'", '.', ',', '?', '!', ';', '-', ' ', ' '), maxLength: 40 });
    fc.assert(
      fc.property(plain, (text) => {
        expect(positions(text)).toEqual(segmenterWords(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads the forms speech writes with apostrophes, and letters joined by a full stop, as one word each', () => {
    const text = "we're rock'n'roll 'cause goin' a''b don't, e.g. end.Next";
    expect(positions(text)).toEqual(segmenterWords(text));
    expect(
      createTokeniser('en')
        .words(text)
        .map((word) => text.slice(word.index, word.end)),
    ).toEqual(["we're", "rock'n'roll", 'cause', 'goin', 'a', 'b', "don't", 'e.g', 'end.Next']);
  });

  it('leaves other text to Intl.Segmenter, and lower-cases terms by the language', () => {
    const text = 'It costs 3.5 dollars, e.g. in 1990s Zürich';
    expect(positions(text)).toEqual(segmenterWords(text));
    expect(
      createTokeniser('tr')
        .words('KIM DIYOR')
        .map((word) => word.term),
    ).toEqual(['kım', 'dıyor']);
  });
});
