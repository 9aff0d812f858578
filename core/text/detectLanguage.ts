/**
 * The language of a transcript, detected from its words with franc (trigram profiles of 187
 * languages) and written as ISO 639-1 where there is such a code, through iso-639-3's table.
 */
import { francAll } from 'franc';
import { iso6393To1 } from 'iso-639-3';
import { hasStopwords } from './tokenise.ts';

// franc names individual languages; ISO 639-1 codes some of them only through their macrolanguage
// (Mandarin is "zh" as Chinese). These are SIL's macrolanguage mappings for the codes franc 6 can
// answer whose macrolanguage has a 639-1 code; the codes themselves still come from iso-639-3.
const MACROLANGUAGE: Record<string, string> = {
  cmn: 'zho',
  arb: 'ara',
  pes: 'fas',
  prs: 'fas',
  zlm: 'msa',
  uzn: 'uzb',
  azj: 'aze',
  swh: 'swa',
  als: 'sqi',
  ekk: 'est',
  lvs: 'lav',
  khk: 'mon',
  plt: 'mlg',
  npi: 'nep',
  pbu: 'pus',
  ydd: 'yid',
  ayr: 'aym',
  quz: 'que',
  quy: 'que',
  qug: 'que',
  ckb: 'kur',
  fuv: 'ful',
  fuf: 'ful',
  knc: 'kau',
  kng: 'kon',
  koi: 'kom',
  zyb: 'zha',
  src: 'srd',
};

// Below this many letters franc guesses; the track's own language is better then.
const MIN_LETTERS = 40;
// franc reads the whole text it is given; a long transcript is sampled in windows spread over it.
const SAMPLE_WINDOWS = 8;
const WINDOW = 600;
// franc scores its best candidate 1 and the others relative to it; one this close is as likely.
const TIE = 0.99;

/** ISO 639-1 for an ISO 639-3 code where one exists, else the 639-3 code. */
export const toIso6391 = (code: string): string => iso6393To1[MACROLANGUAGE[code] ?? code] ?? code;

/** "en-US", "pt-BR", "deu" to a code of the schema's form (639-1 where there is one), or null. */
function normaliseHint(hint: string | null): string | null {
  const primary = hint?.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  if (/^[a-z]{2}$/.test(primary)) return primary;
  return /^[a-z]{3}$/.test(primary) ? toIso6391(primary) : null;
}

function sample(text: string): string {
  if (text.length <= SAMPLE_WINDOWS * WINDOW) return text;
  const step = (text.length - WINDOW) / (SAMPLE_WINDOWS - 1);
  return Array.from({ length: SAMPLE_WINDOWS }, (_, i) => text.slice(Math.round(i * step), Math.round(i * step) + WINDOW)).join(' ');
}

/**
 * The language of `text`: franc's answer, unless the text is too short to tell ('und'), when the
 * hint (the track's language) is taken. Among candidates tied with franc's best, the hint wins, else
 * a language stopwords-iso covers: franc's profiles of regional varieties overlap their large
 * neighbour's (caption English scores as Scots). 'und' when neither knows.
 */
export function detectLanguage(text: string, hint: string | null): string {
  const known = normaliseHint(hint);
  const sampled = sample(text);
  const letters = sampled.match(/\p{L}/gu)?.length ?? 0;
  const candidates = letters < MIN_LETTERS ? [] : francAll(sampled, { minLength: MIN_LETTERS });
  const best = candidates[0];
  if (!best || best[0] === 'und') return known ?? 'und';
  const tied = candidates.filter(([, score]) => score >= TIE).map(([code]) => toIso6391(code));
  if (known && tied.includes(known)) return known;
  return tied.find(hasStopwords) ?? toIso6391(best[0]);
}
