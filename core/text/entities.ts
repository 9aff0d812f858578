/**
 * HTML character references, the one decoder for every text that carries them: caption files
 * (WebVTT, SRT, timedtext XML), archived pages and the Data API's search snippets.
 */

/** A character reference: &amp; &#39; &#x27; &nbsp; … (always with the semicolon). */
export const ENTITY = /&(#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{1,31});/g;

// The named references seen in caption files and pages; others are left as written.
const NAMED = new Map<string, string>(
  Object.entries({
    amp: '&',
    lt: '<',
    gt: '>',
    quot: '"',
    apos: "'",
    nbsp: '\u00a0',
    hellip: '…',
    mdash: '—',
    ndash: '–',
    lsquo: '‘',
    rsquo: '’',
    ldquo: '“',
    rdquo: '”',
    laquo: '«',
    raquo: '»',
    bull: '•',
    middot: '·',
    deg: '°',
    copy: '©',
    reg: '®',
    trade: '™',
    shy: '\u00ad',
    lrm: '\u200e',
    rlm: '\u200f',
    zwj: '\u200d',
    zwnj: '\u200c',
    iexcl: '¡',
    iquest: '¿',
    eacute: 'é',
    egrave: 'è',
    agrave: 'à',
    aacute: 'á',
    ccedil: 'ç',
    ntilde: 'ñ',
    uuml: 'ü',
    ouml: 'ö',
    auml: 'ä',
    szlig: 'ß',
    euro: '€',
    pound: '£',
    yen: '¥',
    cent: '¢',
    times: '×',
    divide: '÷',
    frac12: '½',
    sup2: '²',
    micro: 'µ',
    para: '¶',
    sect: '§',
    hearts: '♥',
    ocirc: 'ô',
  }),
);

/** Names old pages also write in capitals (&AMP;, &Quot;); the others are case-sensitive (&Eacute; is not &eacute;). */
const CASELESS = new Set(['amp', 'lt', 'gt', 'quot', 'apos', 'nbsp']);

function named(name: string): string | undefined {
  const exact = NAMED.get(name);
  if (exact !== undefined) return exact;
  const lower = name.toLowerCase();
  return CASELESS.has(lower) ? NAMED.get(lower) : undefined;
}

function codePoint(value: number): string {
  // What HTML does with references to nothing, surrogates or NUL.
  return value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff) ? '\ufffd' : String.fromCodePoint(value);
}

function decodeOne(whole: string, body: string): string {
  if (body.charCodeAt(0) !== 35 /* # */) return named(body) ?? whole;
  return codePoint(body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10));
}

/** Replaces character references with their characters in one pass (so "&amp;lt;" becomes "&lt;"). */
export function decodeEntities(text: string): string {
  return text.includes('&') ? text.replace(ENTITY, decodeOne) : text;
}
