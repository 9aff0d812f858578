/**
 * How search compares text in every language: lower case, accents removed, compatibility forms unified
 * (ﬁ → fi, full-width → ASCII), so "cafe" finds "Café" and "uber" finds "über". Titles' search
 * (core/fts/query.ts) and what was said (core/subtitles/match.ts) fold alike.
 */

// Most text is ASCII: nothing to decompose then (a third of the cost).
const NON_ASCII = /[^\x00-\x7f]/;

export const fold = (text: string) =>
  NON_ASCII.test(text)
    ? text
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase()
    : text.toLowerCase();
