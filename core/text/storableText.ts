import { UNSTORABLE_CHARACTER } from './sanitiseText.ts';

/**
 * Whether Postgres can store `text` as it is: what sanitiseText would replace (a NUL, a lone
 * surrogate) it cannot. Text from sources is sanitised; a caller's input with such text is refused.
 */
export const isStorable = (text: string) => !UNSTORABLE_CHARACTER.test(text);

/** Why such input is refused, after the name of the field that held it. */
export const UNSTORABLE_REFUSED = 'must not contain a NUL character (U+0000) or an unpaired surrogate';
