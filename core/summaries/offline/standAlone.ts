/**
 * Quoted speech made to stand alone: a sentence lifted out of a talk starts with what tied it to the
 * one before ("And…", "Ну…", "Hi a mark. One of…"). Those openings are dropped, and a sentence that
 * leans on the one before (a pronoun first, "It…", "Они…") or asks a question is marked as not
 * standing alone, so that the tl;dr prefers those that do. Per language, for the corpus's languages.
 */

// Words that open a sentence only to join it to the last one. Those in `always` go whatever follows;
// those in `withComma` only as "So, …" (else they carry meaning: "So far…", "Так как…").
const OPENERS: Record<string, { always: string; withComma: string }> = {
  en: { always: 'and but or okay ok yeah yep oh um uh anyway plus', withComma: 'so now then well also like right alright' },
  ru: { always: 'и но а ну итак', withComma: 'так вот значит короче ладно да' },
  fr: { always: 'et mais donc euh ben bref', withComma: 'alors puis bon enfin voilà ouais oui' },
  es: { always: 'y pero pues', withComma: 'entonces bueno vale sí' },
  de: { always: 'und aber äh', withComma: 'also dann ja na nun okay' },
};

// A first word that points back to something said before.
const ANAPHORA: Record<string, string> = {
  en: "it it’s it's this that these those they he she them his her its",
  ru: 'это этот эта эти он она оно они его её ее их',
  fr: 'il elle ils elles ce cela ça ceci',
  es: 'él ella ellos ellas esto eso esta este',
  de: 'er sie es das dies diese dieser dann',
};

const words = (list: string) => list.split(' ').join('|');
const openerPatterns = new Map(
  Object.entries(OPENERS).map(([language, { always, withComma }]) => [
    language,
    new RegExp(`^(?:(?:${words(always)})(?![\\p{L}\\p{N}'’-])[\\s,]*|(?:${words(withComma)}),\\s*)+`, 'iu'),
  ]),
);
const anaphoraPatterns = new Map(
  Object.entries(ANAPHORA).map(([language, list]) => [language, new RegExp(`^(?:${words(list)})(?![\\p{L}\\p{N}])`, 'iu')]),
);

// A leading sentence this short ("Hi a mark.", "Nicely done.") says nothing on its own.
const SHORT_OPENING = /^[^.!?…。！？]{1,40}?[.!?…。！？]+\s+/u;
const MAX_OPENING_WORDS = 3;
const MIN_REST_WORDS = 6;

const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** `text` without its leading connectives and short opening sentences, when enough is left. */
export function dropOpenings(text: string, language: string): string {
  const opener = openerPatterns.get(language);
  let rest = text.trim();
  for (;;) {
    const before = rest;
    if (opener) rest = rest.replace(opener, '');
    const short = SHORT_OPENING.exec(rest);
    if (short && wordCount(short[0]) <= MAX_OPENING_WORDS && wordCount(rest.slice(short[0].length)) >= MIN_REST_WORDS)
      rest = rest.slice(short[0].length);
    if (rest === before) break;
  }
  return wordCount(rest) >= MIN_REST_WORDS || wordCount(text) < MIN_REST_WORDS ? rest : text.trim();
}

/** Whether `text` (its openings dropped) reads without the sentence before it: no pronoun first, no question. */
export function standsAlone(text: string, language: string): boolean {
  const anaphora = anaphoraPatterns.get(language);
  return !/[?？]\s*$/u.test(text) && !anaphora?.test(text);
}
