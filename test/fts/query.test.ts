import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { formatQuery, parseQuery, tokenize } from '../../core/fts/query.ts';

const shape = (q: string) => {
  const parsed = parseQuery(q);
  return { groups: parsed.groups.map((g) => g.map((t) => t.tokens.join(' '))), excluded: parsed.excluded.map((t) => t.tokens.join(' ')) };
};

describe('query language', () => {
  it('folds case, accents and compatibility forms; splits CJK into characters', () => {
    expect(tokenize('Café ÉLAN ﬁnal ＡＢＣ Ёжик')).toEqual(['cafe', 'elan', 'final', 'abc', 'ежик']);
    expect(tokenize('東京タワー in Tokyo')).toEqual(['東', '京', 'タ', 'ワ', 'ー', 'in', 'tokyo']);
    expect(tokenize('e-mail, 3.5')).toEqual(['e', 'mail', '3', '5']);
  });

  it('reads words, phrases, exclusions and OR', () => {
    expect(shape('old lathe')).toEqual({ groups: [['old'], ['lathe']], excluded: [] });
    expect(shape('"bridge collapsed" river')).toEqual({ groups: [['bridge collapsed'], ['river']], excluded: [] });
    expect(shape('bridge -collapsed -"old bridge"')).toEqual({ groups: [['bridge']], excluded: ['collapsed', 'old bridge'] });
    expect(shape('cats OR dogs OR "guinea pigs" together')).toEqual({
      groups: [['cats', 'dogs', 'guinea pigs'], ['together']],
      excluded: [],
    });
    expect(shape('cats | dogs')).toEqual({ groups: [['cats', 'dogs']], excluded: [] });
    expect(shape('cats or dogs')).toEqual({ groups: [['cats'], ['or'], ['dogs']], excluded: [] });
    expect(shape('OR cats OR')).toEqual({ groups: [['cats']], excluded: [] });
    expect(shape('"unclosed phrase')).toEqual({ groups: [['unclosed phrase']], excluded: [] });
    expect(shape('e-mail')).toEqual({ groups: [['e mail']], excluded: [] });
  });

  it('refuses empty queries, only exclusions, and too much', () => {
    const refusal = (q: string) => {
      try {
        parseQuery(q);
      } catch (error) {
        return (error as AppError).message;
      }
      return 'accepted';
    };
    expect(refusal('')).toMatch(/^q: must not be empty/);
    expect(refusal('-cats -"dogs"')).toMatch(/^q: needs at least one word/);
    expect(refusal('!!! ???')).toMatch(/^q: has no letters or digits/);
    expect(refusal('a '.repeat(40))).toMatch(/^q: at most 32 words/);
    expect(refusal('x'.repeat(501))).toMatch(/^q: at most 500 characters/);
  });

  it('writes a parsed query back so that it parses the same', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (q) => {
        let parsed: ReturnType<typeof parseQuery>;
        try {
          parsed = parseQuery(q);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).code).toBe('INVALID_INPUT');
          return;
        }
        expect(shape(formatQuery(parsed))).toEqual(shape(q));
      }),
      { numRuns: 500 },
    );
  });
});
