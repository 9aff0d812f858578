/**
 * The summary's prose, all of it quoted from the transcript: the title (the video's own, else the
 * start of the best sentence), a tldr of the 2-3 best distinct sentences, the key points, and one
 * paragraph per time section of its best sentences, each headed by its time range.
 */
import type { KeyPoint } from '../summary.ts';
import type { Unit } from './buildUnits.ts';
import { asSentence, capitalise, clip, joinSentences } from './displayText.ts';
import { pickDistinct } from './pickDistinct.ts';
import type { Ranked } from './pickKeyPoints.ts';
import { dropOpenings, standsAlone } from './standAlone.ts';
import type { TimeSections } from './timeSections.ts';

const TITLE_WORDS = 8;
const TITLE_CHARS = 80;
const TLDR_SENTENCE_CHARS = 220;
const POINT_CHARS = 300;
const MAX_PER_PARAGRAPH = 4;

export interface Writing {
  units: readonly Unit[];
  ranked: Ranked;
  sections: TimeSections;
  locale: string | undefined;
  /** ISO 639-1, as detected. */
  language: string;
  /** False for auto captions: no sentence punctuation, so each unit is taken as one sentence. */
  punctuated: boolean;
}

// Auto captions write the English pronoun in lower case.
const LOWER_I = /(?<![\p{L}\p{N}'’])i(?=$|[\s,.!?'’])/gu;

/** A unit's words as a sentence of the summary: openings dropped, capitals where auto captions lack them, an end. */
function quote({ units, locale, language, punctuated }: Writing, unit: number, max: number): string {
  let text = dropOpenings(units[unit]!.text, language);
  if (!punctuated && language === 'en') text = text.replace(LOWER_I, 'I');
  // Auto captions' unit is a sentence when cut at a pause after a word that can end one.
  return asSentence(text, locale, max, !punctuated && units[unit]!.words.at(-1)?.term != null);
}

const byTime = (a: number, b: number) => a - b;

/** The video's title; without one, the first words of the best sentence. */
export function writeTitle({ units, ranked, locale }: Writing, videoTitle: string | null): string {
  const given = videoTitle?.replace(/\s+/g, ' ').trim();
  if (given) return given;
  const best = units[ranked.order[0]!]!;
  const cut = best.words[TITLE_WORDS]?.index ?? best.text.length;
  const words = clip(best.text.slice(0, cut).trim(), TITLE_CHARS).replace(/[\s\p{P}]+$/u, '');
  return capitalise(words, locale) || best.text;
}

/**
 * The 2-3 best sentences that do not repeat each other and stand alone (no question, no pronoun
 * pointing back), in video order; those that do not stand alone only when too few do.
 */
export function writeTldr(writing: Writing): string {
  const { units, ranked, language } = writing;
  const count = units.length >= 6 ? 3 : 2;
  const alone = ranked.order.filter((unit) => standsAlone(dropOpenings(units[unit]!.text, language), language));
  const picked = pickDistinct(alone, count, ranked.similarity);
  const filled = pickDistinct(ranked.order, count, ranked.similarity, { chosen: picked, fillWithRepeats: true });
  return joinSentences(filled.sort(byTime).map((unit) => quote(writing, unit, TLDR_SENTENCE_CHARS)));
}

export function writeKeyPoints(writing: Writing, chosen: readonly number[]): KeyPoint[] {
  return chosen.map((unit) => ({ text: quote(writing, unit, POINT_CHARS), startSeconds: Math.floor(writing.units[unit]!.start) }));
}

/** One paragraph per time section that has speech: its best sentences (about √n/2 of its n, 1-4), in order. */
export function writeDetailed(writing: Writing): string {
  const { units, ranked, sections } = writing;
  const members = Array.from({ length: sections.count }, () => [] as number[]);
  for (const unit of ranked.order) members[sections.of(units[unit]!.start)]!.push(unit);
  const paragraphs: string[] = [];
  members.forEach((section, index) => {
    if (section.length === 0) return;
    const count = Math.min(MAX_PER_PARAGRAPH, Math.max(1, Math.ceil(Math.sqrt(section.length) / 2)));
    const picked = pickDistinct(section, count, ranked.similarity).sort(byTime);
    const sentences = picked.map((unit) => quote(writing, unit, POINT_CHARS));
    paragraphs.push(`${sections.label(index)}: ${joinSentences(sentences)}`);
  });
  return paragraphs.join('\n\n');
}
