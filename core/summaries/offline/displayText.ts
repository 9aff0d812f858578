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

/** `text` as a sentence: clipped, a capital first letter, and "…" where auto captions give no full stop. */
export function asSentence(text: string, locale: string | undefined, max: number): string {
  const clipped = clip(text.trim(), max);
  const first = clipped.codePointAt(0);
  if (first === undefined) return clipped;
  const head = String.fromCodePoint(first);
  const capitalised = head.toLocaleUpperCase(locale) + clipped.slice(head.length);
  return TERMINAL.test(capitalised) ? capitalised : `${capitalised.replace(/[\s,;:–—-]+$/u, '')}…`;
}
