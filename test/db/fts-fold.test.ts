import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// sql/021 lets text without a character past ASCII skip NFKC, the CJK spacing and unaccent; the claim is
// that those steps never change such text, so the short path answers what the full one does.
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
const OTHER_TEXTS = ['Café ÉLAN ﬁnal ＡＢＣ Ёжик', '東京タワー in Tokyo', 'ΣΊΣΥΦΟΣ straße'];

describe('fts_fold', () => {
  it('folds ASCII text exactly as the full path does, and other text through it', async () => {
    const rows = await db.sql<{ text: string; folded: string; full: string; ascii: boolean }[]>`
      select t as text, fts_fold(t) as folded, t !~ '[^\\x01-\\x7f]' as ascii,
        lower(public.unaccent('public.unaccent'::regdictionary,
          regexp_replace(normalize(t, NFKC), '([\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff])', ' \\1 ', 'g')) collate "und-x-icu") as full
      from unnest(${[...ASCII_TEXTS, ...OTHER_TEXTS]}::text[]) t`;
    expect(rows.map((row) => row.ascii)).toEqual([...ASCII_TEXTS.map(() => true), ...OTHER_TEXTS.map(() => false)]);
    for (const row of rows) expect(row.folded).toBe(row.full);
    expect(rows[0]!.folded).toBe('never gonna give you up (official video) [4k remaster]');
  });
});
