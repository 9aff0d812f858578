/**
 * A tag as caption text writes them: <i>, </b>, <c.colorE5E5E5>, <v Mira>, <font color="…">, and
 * WebVTT's inline timestamps <00:00:01.234>. A "<" not followed by a letter, "/" or a digit is text.
 */
export const TAG = /<(?:\/?[A-Za-z][^<>]*|\d[\d:.]*)>/g;

/** Drops the tags and keeps what is between them. */
export function stripTags(text: string): string {
  return text.includes('<') ? text.replace(TAG, '') : text;
}
