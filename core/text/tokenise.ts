/**
 * Words and the terms they count as, for any language: Intl.Segmenter finds the words (it segments
 * Japanese, Chinese and Thai by dictionary, where spaces do not), and stopwords-iso's list for the
 * language drops the function words, fillerWords the words of speech that say nothing.
 */
import stopwordsIso from 'stopwords-iso/stopwords-iso.json' with { type: 'json' };
import { fillerWords } from './fillerWords.ts';

/** One word of a text: where it is, and its term (null for a stopword or a word without letters). */
export interface Word {
  index: number;
  end: number;
  term: string | null;
}

export interface Tokeniser {
  /** The locale used for segmenting and lower-casing, undefined when the language is no valid tag. */
  readonly locale: string | undefined;
  words(text: string): Word[];
}

const LETTER = /\p{L}/u;
/**
 * Text of Latin letters, spaces and the commonest punctuation, as captions mostly are: its words are
 * the runs of letters joined by single apostrophes or full stops ("we're", "rock'n'roll", "e.g"),
 * exactly what Intl.Segmenter's word rules find in it (UAX #29 WB5–WB7; a property test holds them
 * equal), found without it: V8's segmenter costs about 4 µs a word, a third of summarising a transcript.
 */
const PLAIN_TEXT = /^[A-Za-z'.,?!; -]*$/;
const PLAIN_WORD = /[A-Za-z]+(?:['.][A-Za-z]+)*/g;
// One character is a word in Chinese and Japanese kanji; elsewhere it is an initial or a stray letter.
const IDEOGRAPH = /\p{Script=Han}/u;

function canonicalLocale(language: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(language)[0];
  } catch {
    return undefined;
  }
}

const stopwordLists = stopwordsIso as Record<string, string[] | undefined>;
/** Whether stopwords-iso has a list for `language` (ISO 639-1). */
export const hasStopwords = (language: string): boolean => (stopwordLists[language]?.length ?? 0) > 0;

const normalise = (word: string, locale: string | undefined) => word.normalize('NFKC').toLocaleLowerCase(locale).replace(/’/g, "'");

/** A tokeniser for `language` (ISO 639-1, or 639-3); without a stopword list, only letters decide what is a term. */
export function createTokeniser(language: string): Tokeniser {
  const locale = canonicalLocale(language);
  const segmenter = new Intl.Segmenter(locale, { granularity: 'word' });
  const stopwords = new Set([...(stopwordLists[language] ?? []), ...fillerWords(language)].map((word) => normalise(word, locale)));
  // A transcript says the same words again and again: each is worked out once per tokeniser.
  const terms = new Map<string, string | null>();
  const termOf = (segment: string): string | null => {
    let term = terms.get(segment);
    if (term !== undefined) return term;
    term = normalise(segment, locale);
    if (stopwords.has(term) || !LETTER.test(term) || (term.length < 2 && !IDEOGRAPH.test(term))) term = null;
    terms.set(segment, term);
    return term;
  };
  return {
    locale,
    words(text) {
      const out: Word[] = [];
      if (PLAIN_TEXT.test(text)) {
        for (const { 0: segment, index } of text.matchAll(PLAIN_WORD))
          out.push({ index, end: index + segment.length, term: termOf(segment) });
        return out;
      }
      for (const { segment, index, isWordLike } of segmenter.segment(text)) {
        if (isWordLike) out.push({ index, end: index + segment.length, term: termOf(segment) });
      }
      return out;
    },
  };
}
