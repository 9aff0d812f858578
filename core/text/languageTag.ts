/**
 * A BCP 47 language tag (RFC 5646), checked by ICU's parser (Intl.getCanonicalLocales, built into
 * Node) and written in the RFC's case conventions: `EN-gb` → `en-GB`, `zh-hans` → `zh-Hans`,
 * `es-419`. Undefined when ICU does not accept it as a tag (`live_chat`, `en_US`, `a-en`,
 * `en-uYU-mmqFLq8`). ICU checks the grammar, not the IANA registry: `de-EN` is well formed.
 *
 * The subtags are kept as written, not replaced by ICU's preferred ones (`iw` stays `iw`, not `he`;
 * `tl` stays `tl`, not `fil`): they are the codes YouTube and yt-dlp write, that a video's language
 * is given in and that clients ask for.
 */
export function languageTag(tag: string): string | undefined {
  try {
    Intl.getCanonicalLocales(tag);
  } catch {
    return undefined;
  }
  let extension = false;
  return tag
    .split('-')
    .map((subtag, index) => {
      const lower = subtag.toLowerCase();
      if (subtag.length === 1) extension = true; // a singleton (-u-, -x-…): what follows is lower case
      if (index === 0 || extension) return lower;
      if (subtag.length === 2) return subtag.toUpperCase(); // region
      if (/^[a-z]{4}$/.test(lower)) return lower[0]!.toUpperCase() + lower.slice(1); // script
      return lower;
    })
    .join('-');
}
