import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { highlighter, highlightHtml } from '../../core/fts/highlight.ts';
import { parseQuery } from '../../core/fts/query.ts';

const words = ['com', 'the', 'to', 'a', 'www', 'https', 'Com', 'THE', 'tom', 'atom', '3d', 'x1'];

/** The highlighter of a query, its highlights as the API sends them (HTML). */
function htmlHighlighter(query: string) {
  const mark = highlighter(parseQuery(query));
  return Object.assign((text: string) => highlightHtml(mark(text)!), { hitsInLines: mark.hitsInLines });
}

describe('highlighting', () => {
  it('answers the text in parts, unescaped, each match a marked part of its own', () => {
    const mark = highlighter(parseQuery('lathe 東 京'));
    expect(mark('<b>Old</b> lathe & 東京')).toEqual([
      { text: '<b>Old</b> ', marked: false },
      { text: 'lathe', marked: true },
      { text: ' & ', marked: false },
      { text: '東', marked: true },
      { text: '京', marked: true },
    ]);
    expect(mark(`${'word '.repeat(60)}lathe${' word'.repeat(60)}`, 50)).toEqual([
      { text: '…word word ', marked: false },
      { text: 'lathe', marked: true },
      { text: ' word word word word word word word…', marked: false },
    ]);
    expect(mark('')).toEqual([]);
    expect(mark(null)).toBeNull();
    expect(highlightHtml(mark('<b>lathe</b> "&"')!)).toBe('&#60;b&#62;<mark>lathe</mark>&#60;/b&#62; &#34;&#38;&#34;');
  });

  it('marks whole words only, case aside', () => {
    const mark = htmlHighlighter('com the');
    expect(mark('www.youtube.COM/the, comx theme THE<b>')).toBe(
      'www.youtube.<mark>COM</mark>/<mark>the</mark>, comx theme <mark>THE</mark>&#60;b&#62;',
    );
    expect(mark.hitsInLines('comma then')).toEqual([]);
  });

  it('marks words of any script, folded, and leaves words that only contain them', () => {
    const mark = htmlHighlighter('ete москва');
    expect(mark('Été à МОСКВА, étés москвах — 🎉été')).toBe('<mark>Été</mark> à <mark>МОСКВА</mark>, étés москвах — 🎉<mark>été</mark>');
    expect(mark('ÉTÉ ½ Москва')).toBe('<mark>ÉTÉ</mark> ½ <mark>Москва</mark>');
  });

  // A word that does not fold in place ('½' folds to three characters) sends the whole text down the path
  // that folds word by word, so each property compares the two paths over the same text.
  const wordByWord = (mark: ReturnType<typeof htmlHighlighter>, text: string) => {
    expect(mark(`${text} ½`)).toBe(`${mark(text)} ½`);
    expect(mark.hitsInLines(`${text} ½`)).toEqual(mark.hitsInLines(text));
  };

  it('finds in ASCII text what it finds word by word', () => {
    const text = fc
      .array(fc.oneof(fc.constantFrom(...words), fc.constantFrom(' ', '.', '/', '-', '<', '&', '"', '', '1')), { maxLength: 30 })
      .map((parts) => parts.join(''));
    const query = fc
      .array(fc.constantFrom(...words.slice(0, 6), '"the com"'), { minLength: 1, maxLength: 3 })
      .map((parts) => parts.join(' '));
    fc.assert(
      fc.property(text, query, (t, q) => wordByWord(htmlHighlighter(q), t)),
      { numRuns: 500 },
    );
  });

  it('finds in text of other scripts, folded in place, what it finds word by word', () => {
    // Accents, Cyrillic, Greek (Σ lower-cases by its place), ligatures, combining marks, CJK, letters and
    // emoji beyond the BMP, a letter that folds to a space (ͺ), letters beside the words searched for.
    const others = [
      'été',
      'ÉTÉ',
      'ete',
      'москва',
      'МОСКВА',
      'ёж',
      'ΟΔΟΣ',
      'οδος',
      'ﬁn',
      'fin',
      'e\u0301te',
      '東京',
      '東',
      '𐌰𐌱',
      '🎉',
      'é',
      'ж',
      'ß',
      'İ',
      'ͺ',
    ];
    const text = fc
      .array(fc.oneof(fc.constantFrom(...others), fc.constantFrom(' ', '.', '—', '«', '»', '', '1', 'a')), { maxLength: 30 })
      .map((parts) => parts.join(''));
    const query = fc
      .array(fc.constantFrom('ete', 'москва', 'еж', 'οδος', 'fin', '東', '𐌰𐌱', 'a', '"ete москва"'), { minLength: 1, maxLength: 3 })
      .map((parts) => parts.join(' '));
    fc.assert(
      fc.property(text, query, (t, q) => wordByWord(htmlHighlighter(q), t)),
      { numRuns: 1000 },
    );
  });

  it('finds in a text of many lines what each line alone holds, whichever way its block is read', () => {
    // More than LINES_BLOCK characters in all, so blocks are cut; a rare Hangul word or ligature does not
    // fold in place (its block is read line by line).
    const part = fc.oneof(
      { arbitrary: fc.constantFrom('com', 'the', 'été', 'москва', 'x', '12', ' ', ' ', '.'), weight: 1000 },
      { arbitrary: fc.constantFrom('이다', 'ﬁn'), weight: 1 },
    );
    const line = fc.array(part, { minLength: 5, maxLength: 30 }).map((parts) => parts.join(''));
    const query = fc.constantFrom('com', 'the ete', 'москва OR fin', '"com the"', '12');
    fc.assert(
      fc.property(fc.array(line, { minLength: 200, maxLength: 300 }), query, (lines, q) => {
        const mark = htmlHighlighter(q);
        const text = lines.join('\n');
        const starts = lines.map((_, index) => lines.slice(0, index).reduce((sum, l) => sum + l.length + 1, 0));
        const perLine = lines.map(() => 0);
        for (const hit of mark.hitsInLines(text)) {
          const index = starts.filter((start) => start <= hit.start).length - 1;
          expect(hit.end).toBeLessThanOrEqual(starts[index]! + lines[index]!.length);
          perLine[index]! += 1;
        }
        expect(perLine).toEqual(lines.map((l) => (mark(l).match(/<mark>/g) ?? []).length));
      }),
      { numRuns: 100 },
    );
  });
});
