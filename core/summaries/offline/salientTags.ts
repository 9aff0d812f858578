/**
 * Tags: the transcript's salient terms and two-word phrases, weighted TF-IDF-like against the
 * transcript itself (its units are the documents): tf · ln(1 + N/df), phrases ×1.5. Inflected forms
 * count as one (by stem: "пастилу" and "пастила", "users" and "user"), written as said most often. A
 * term must come back at least twice (a word: once in a very short transcript); a tag shares no word
 * with a better one.
 */
import type { Unit } from './buildUnits.ts';

const MAX_TAGS = 12;
const MAX_LENGTH = 40;
const PHRASE_BOOST = 1.5;
// A word is tagged as its phrase when at least this share of its mentions are in the phrase.
const PHRASE_SHARE = 2;
// Fewer content words than this and a single mention is all there is.
const SHORT_TRANSCRIPT = 60;

// Verb forms are no tags: Russian and Ukrainian reflexives (-ся/-сь, "отличается") and infinitives
// ("добавить"; not -еть/-оть, which end nouns as often: "сеть", "плоть").
const VERB_FORM = /(?:ся|сь|[аяиыу]ть|ти|чь)$/u;

// One or two hiragana alone are the inflections Intl.Segmenter leaves of Japanese verbs ("しく", "えて").
const KANA_ENDING = /^\p{Script=Hiragana}{1,2}$/u;

interface Candidate {
  /** The stems of its words: what counts as the same tag. */
  key: string;
  parts: string[];
  /** How often each way of writing it was said. */
  forms: Map<string, number>;
  count: number;
  units: number;
}

// What may stand between the two words of a phrase: a space, or a hyphen ("real-time"), not "foo, bar".
const JOINT = /^(?:\s*|-)$/;

/** The unit's terms and two-word phrases (adjacent terms joined by JOINT), each with its stems. */
function unitCandidates(unit: Unit, stem: (word: string) => string): Array<{ tag: string; parts: string[] }> {
  const out: Array<{ tag: string; parts: string[] }> = [];
  unit.words.forEach((word, i) => {
    if (!word.term) return;
    out.push({ tag: word.term, parts: [stem(word.term)] });
    const next = unit.words[i + 1];
    if (!next?.term) return;
    const gap = unit.text.slice(word.end, next.index);
    if (JOINT.test(gap))
      out.push({ tag: `${word.term}${gap === '-' ? '-' : gap ? ' ' : ''}${next.term}`, parts: [stem(word.term), stem(next.term)] });
  });
  return out;
}

/**
 * How a tag is written: the shortest of the forms said at least half as often as the commonest (a
 * noun's plain form is usually its shortest: "масло" rather than "маслом"), the first in the alphabet among equals.
 */
function commonestForm(c: Candidate): string {
  const most = Math.max(...c.forms.values());
  // A phrase's words agree with each other only as said: its commonest form, never a mix.
  const frequent = [...c.forms].filter(([, n]) => (c.parts.length > 1 ? n === most : 2 * n >= most)).map(([form]) => form);
  return frequent.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0]!;
}

/**
 * Words the stemmer leaves apart although they are forms of one word (Snowball reads "пастила" as a
 * verb ending, "пастилы" as a noun's): a one-word candidate joins another when its stem starts the
 * other's and the two words differ only in their last two letters. Counts move to the longer stem.
 */
function foldNearForms(candidates: Map<string, Candidate>): void {
  const words = [...candidates.values()].filter((c) => c.parts.length === 1);
  // Keys in order, so that the keys a stem starts are one run after it (found by binary search).
  const byKey = [...words].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const forms = new Map<Candidate, string>();
  const formOf = (c: Candidate) => forms.get(c) ?? forms.set(c, commonestForm(c)).get(c)!;
  const near = (a: string, b: string) => {
    let shared = 0;
    while (shared < Math.min(a.length, b.length) && a[shared] === b[shared]) shared++;
    return shared >= Math.max(4, Math.max(a.length, b.length) - 2);
  };
  for (const short of words.sort((a, b) => a.key.length - b.key.length)) {
    let at = 0;
    for (let high = byKey.length; at < high; ) {
      const middle = (at + high) >> 1;
      if (byKey[middle]!.key < short.key) at = middle + 1;
      else high = middle;
    }
    let into: Candidate | undefined;
    for (let j = at; j < byKey.length && byKey[j]!.key.startsWith(short.key); j++) {
      const long = byKey[j]!;
      if (long === short || !candidates.has(long.key) || (into && into.key.length <= long.key.length)) continue;
      if (near(formOf(short), formOf(long))) into = long;
    }
    if (!into) continue;
    into.count += short.count;
    into.units += short.units;
    for (const [form, n] of short.forms) into.forms.set(form, (into.forms.get(form) ?? 0) + n);
    forms.delete(into);
    candidates.delete(short.key);
  }
}

export function salientTags(units: readonly Unit[], stemWord: (word: string) => string): string[] {
  // Each term is stemmed once, not at every mention (a third of this function's time).
  const stems = new Map<string, string>();
  const stem = (word: string) => stems.get(word) ?? stems.set(word, stemWord(word)).get(word)!;
  const candidates = new Map<string, Candidate>();
  let contentWords = 0;
  for (const unit of units) {
    const seen = new Set<string>();
    for (const { tag, parts } of unitCandidates(unit, stem)) {
      if (parts.length === 1) contentWords++;
      const key = parts.join(' ');
      let candidate = candidates.get(key);
      if (!candidate) candidates.set(key, (candidate = { key, parts, forms: new Map(), count: 0, units: 0 }));
      candidate.count++;
      candidate.forms.set(tag, (candidate.forms.get(tag) ?? 0) + 1);
      if (!seen.has(key)) candidate.units++;
      seen.add(key);
    }
  }
  foldNearForms(candidates);
  // A phrase said once is no phrase of the talk's; a word said once is all a very short one has.
  const minCount = (c: Candidate) => (c.parts.length > 1 || contentWords >= SHORT_TRANSCRIPT ? 2 : 1);
  const weight = (c: Candidate) => c.count * Math.log(1 + units.length / c.units) * (c.parts.length > 1 ? PHRASE_BOOST : 1);
  const ranked = [...candidates.values()]
    .map((c) => ({ c, tag: commonestForm(c), w: weight(c) }))
    .filter(
      ({ c, tag }) =>
        c.count >= minCount(c) && tag.length <= MAX_LENGTH && !KANA_ENDING.test(tag) && !(c.parts.length === 1 && VERB_FORM.test(tag)),
    )
    .sort((a, b) => b.w - a.w || (a.tag < b.tag ? -1 : 1));
  // A word said mostly within one phrase ("система" of "операционная система") is tagged as the phrase.
  const phraseOf = (word: Candidate) =>
    ranked.find(({ c }) => c.parts.length > 1 && c.parts.includes(word.key) && PHRASE_SHARE * c.count >= word.count);
  const tags: string[] = [];
  const used = new Set<string>();
  for (const entry of ranked) {
    if (tags.length >= MAX_TAGS) break;
    const { c, tag } = (entry.c.parts.length === 1 && phraseOf(entry.c)) || entry;
    if (c.parts.some((part) => used.has(part))) continue;
    tags.push(tag);
    for (const part of c.parts) used.add(part);
  }
  return tags;
}
