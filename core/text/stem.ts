/**
 * Inflected forms folded to one stem (Snowball's algorithms, as @orama/stemmers ports them), so that
 * "пастила" and "пастилу" or "user" and "users" count as one word. Languages without a stemmer keep
 * their words as they are (Japanese and Chinese do not inflect that way).
 */
import { stemmer as arabic } from '@orama/stemmers/arabic';
import { stemmer as bulgarian } from '@orama/stemmers/bulgarian';
import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as english } from '@orama/stemmers/english';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as greek } from '@orama/stemmers/greek';
import { stemmer as hungarian } from '@orama/stemmers/hungarian';
import { stemmer as indonesian } from '@orama/stemmers/indonesian';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as romanian } from '@orama/stemmers/romanian';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';
import { stemmer as turkish } from '@orama/stemmers/turkish';
import { stemmer as ukrainian } from '@orama/stemmers/ukrainian';

// By ISO 639-1 code, as languages are detected and stored.
const STEMMERS: Record<string, (word: string) => string> = {
  ar: arabic,
  bg: bulgarian,
  da: danish,
  nl: dutch,
  en: english,
  fi: finnish,
  fr: french,
  de: german,
  el: greek,
  hu: hungarian,
  id: indonesian,
  it: italian,
  no: norwegian,
  nb: norwegian,
  pt: portuguese,
  ro: romanian,
  ru: russian,
  es: spanish,
  sv: swedish,
  tr: turkish,
  uk: ukrainian,
};

const unchanged = (word: string) => word;

/** The stemmer of `language` (an ISO 639-1 code or a BCP 47 tag), or one that keeps words as they are. */
export function stemmerFor(language: string | null | undefined): (word: string) => string {
  const primary = language?.toLowerCase().split(/[-_]/)[0] ?? '';
  return STEMMERS[primary] ?? unchanged;
}
