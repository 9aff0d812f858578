import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// sql/021 lets text without a character past ASCII skip NFKC, the CJK spacing and unaccent, and sql/039
// skips NFKC for text already in that form and the spacing for text without a CJK character; the claim
// is that the skipped steps never change such text, so every short path answers what the full one does.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

const ASCII_TEXTS = [
  'Never Gonna Give You Up (Official Video) [4K REMASTER]',
  'E-MAIL me: A.B@Example.COM, 3.5 / 100% #Tags & "quotes" \\ back\tslash\nnew line',
  Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join(''),
];
/** Every step of the fold, unconditionally, on the column `t` (sql/009). */
const fullFold = (test: TestDatabase) => test.sql`
  lower(public.unaccent('public.unaccent'::regdictionary,
    regexp_replace(normalize(t, NFKC), '([\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff])', ' \\1 ', 'g')) collate "und-x-icu")`;

/**
 * Characters from the blocks where the short paths could go wrong: text that NFKC changes (ligatures,
 * full and half width forms, Kangxi radicals, compatibility and enclosed ideographs, mathematical letters
 * beyond the BMP), some into CJK characters or into ASCII; CJK itself; accents, combining marks, final
 * sigma; and plain ASCII around them.
 */
const CHARACTER_RANGES: Array<[number, number]> = [
  [0x20, 0x7e],
  [0xc0, 0x17f],
  [0x300, 0x36f],
  [0x391, 0x3c9],
  [0x400, 0x44f],
  [0x1100, 0x1112],
  [0x2f00, 0x2fd5],
  [0x3000, 0x30ff],
  [0x3220, 0x3243],
  [0x32d0, 0x32fe],
  [0x3300, 0x3357],
  [0x4e00, 0x4e40],
  [0xac00, 0xac40],
  [0xf900, 0xf930],
  [0xfb00, 0xfb06],
  [0xff01, 0xff9f],
  [0x1d400, 0x1d433],
  [0x1f200, 0x1f202],
  [0x1f600, 0x1f606],
];
const character = fc.oneof(
  ...CHARACTER_RANGES.map(([from, to]) => fc.integer({ min: from, max: to }).map((code) => String.fromCodePoint(code))),
);

const OTHER_TEXTS = ['Café ÉLAN ﬁnal ＡＢＣ Ёжик', '東京タワー in Tokyo', 'ΣΊΣΥΦΟΣ straße'];

describe('fts_fold', () => {
  it('folds ASCII text exactly as the full path does, and other text through it', async () => {
    const rows = await db.sql<{ text: string; folded: string; full: string; ascii: boolean }[]>`
      select t as text, fts_fold(t) as folded, t !~ '[^\\x01-\\x7f]' as ascii, ${fullFold(db)} as full
      from unnest(${[...ASCII_TEXTS, ...OTHER_TEXTS]}::text[]) t`;
    expect(rows.map((row) => row.ascii)).toEqual([...ASCII_TEXTS.map(() => true), ...OTHER_TEXTS.map(() => false)]);
    for (const row of rows) expect(row.folded).toBe(row.full);
    expect(rows[0]!.folded).toBe('never gonna give you up (official video) [4k remaster]');
  });

  it('folds any text as every step would, whichever steps it skips', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: character, maxLength: 24 }), { minLength: 100, maxLength: 100 }), async (texts) => {
        const rows = await db.sql<{ text: string; folded: string; full: string }[]>`
          select t as text, fts_fold(t) as folded, ${fullFold(db)} as full from unnest(${texts}::text[]) t`;
        for (const row of rows) expect(row.folded, JSON.stringify(row.text)).toBe(row.full);
      }),
      { numRuns: 30 },
    );
  });
});
