/**
 * Tags: the transcript's salient terms and two-word phrases, weighted TF-IDF-like against the
 * transcript itself (its units are the documents): tf · ln(1 + N/df), phrases ×1.5. A term must come
 * back at least twice (a word: once in a very short transcript); a tag shares no word with a better one.
 */
import type { Unit } from './buildUnits.ts';

const MAX_TAGS = 12;
const MAX_LENGTH = 40;
const PHRASE_BOOST = 1.5;
// Fewer content words than this and a single mention is all there is.
const SHORT_TRANSCRIPT = 60;

// One or two hiragana alone are the inflections Intl.Segmenter leaves of Japanese verbs ("しく", "えて").
const KANA_ENDING = /^\p{Script=Hiragana}{1,2}$/u;

interface Candidate {
  tag: string;
  parts: string[];
  count: number;
  units: number;
}

// What may stand between the two words of a phrase: a space, or a hyphen ("real-time"), not "foo, bar".
const JOINT = /^(?:\s*|-)$/;

/** The unit's terms and two-word phrases (adjacent terms joined by JOINT). */
function unitCandidates(unit: Unit): Array<{ tag: string; parts: string[] }> {
  const out: Array<{ tag: string; parts: string[] }> = [];
  unit.words.forEach((word, i) => {
    if (!word.term) return;
    out.push({ tag: word.term, parts: [word.term] });
    const next = unit.words[i + 1];
    if (!next?.term) return;
    const gap = unit.text.slice(word.end, next.index);
    if (JOINT.test(gap)) out.push({ tag: `${word.term}${gap === '-' ? '-' : gap ? ' ' : ''}${next.term}`, parts: [word.term, next.term] });
  });
  return out;
}

export function salientTags(units: readonly Unit[]): string[] {
  const candidates = new Map<string, Candidate>();
  let contentWords = 0;
  for (const unit of units) {
    const seen = new Set<string>();
    for (const { tag, parts } of unitCandidates(unit)) {
      if (parts.length === 1) contentWords++;
      let candidate = candidates.get(tag);
      if (!candidate) candidates.set(tag, (candidate = { tag, parts, count: 0, units: 0 }));
      candidate.count++;
      if (!seen.has(tag)) candidate.units++;
      seen.add(tag);
    }
  }
  // A phrase said once is no phrase of the talk's; a word said once is all a very short one has.
  const minCount = (c: Candidate) => (c.parts.length > 1 || contentWords >= SHORT_TRANSCRIPT ? 2 : 1);
  const weight = (c: Candidate) => c.count * Math.log(1 + units.length / c.units) * (c.parts.length > 1 ? PHRASE_BOOST : 1);
  const ranked = [...candidates.values()]
    .filter((c) => c.count >= minCount(c) && c.tag.length <= MAX_LENGTH && !KANA_ENDING.test(c.tag))
    .map((c) => ({ c, w: weight(c) }))
    .sort((a, b) => b.w - a.w || (a.c.tag < b.c.tag ? -1 : 1));
  const tags: string[] = [];
  const used = new Set<string>();
  for (const { c } of ranked) {
    if (tags.length >= MAX_TAGS) break;
    if (c.parts.some((part) => used.has(part))) continue;
    tags.push(c.tag);
    for (const part of c.parts) used.add(part);
  }
  return tags;
}
