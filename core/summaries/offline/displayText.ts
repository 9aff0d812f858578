/** Quoted transcript text made readable: clipped at a word, capitalised, and marked when it is a fragment. */

const TERMINAL = /[.!?…。！？]["'”’»)\]]*$/u;

/** `text` cut to at most `max` characters, at a space where there is one in the last half, with "…". */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  const head = space > max / 2 ? cut.slice(0, space) : cut;
  // Never end on half a surrogate pair.
  return `${head.replace(/[\uD800-\uDBFF]$/, '').replace(/[\s,;:–—-]+$/u, '')}…`;
}

/** `text` with its first letter in capitals (auto captions are all lower case). */
export function capitalise(text: string, locale: string | undefined): string {
  const first = text.codePointAt(0);
  if (first === undefined) return text;
  const head = String.fromCodePoint(first);
  return head.toLocaleUpperCase(locale) + text.slice(head.length);
}

/**
 * `text` as a sentence: clipped, a capital first letter, and an end: "…" where it stops short of its
 * sentence's end, "." where `complete` says the words are a whole sentence without punctuation (a unit
 * of auto captions, cut where the speaker paused).
 */
export function asSentence(text: string, locale: string | undefined, max: number, complete = false): string {
  const clipped = clip(text.trim(), max);
  const capitalised = capitalise(clipped, locale);
  if (TERMINAL.test(capitalised) || !capitalised) return capitalised;
  const bare = capitalised.replace(/[\s,;:–—-]+$/u, '');
  return complete && clipped.length === text.trim().length ? `${bare}.` : `${bare}…`;
}

// Chinese and Japanese put no space between words or after a full stop.
const CLOSED_UP = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}。、，！？ー]/u;

/** `left` and `right` run together: with a space, or none between Chinese or Japanese text. */
export function joinText(left: string, right: string): string {
  if (!left || !right) return left + right;
  return CLOSED_UP.test(left.at(-1)!) && CLOSED_UP.test(right[0]!) ? left + right : `${left} ${right}`;
}

export const joinSentences = (sentences: readonly string[]): string => sentences.reduce(joinText, '');
