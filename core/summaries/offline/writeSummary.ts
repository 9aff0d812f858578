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

/** The 2-3 best sentences that do not repeat each other, in video order. */
export function writeTldr({ units, ranked, locale }: Writing): string {
  const picked = pickDistinct(ranked.order, units.length >= 6 ? 3 : 2, ranked.similarity, { fillWithRepeats: true });
  return joinSentences(picked.sort(byTime).map((unit) => asSentence(units[unit]!.text, locale, TLDR_SENTENCE_CHARS)));
}

export function writeKeyPoints({ units, locale }: Writing, chosen: readonly number[]): KeyPoint[] {
  return chosen.map((unit) => ({ text: asSentence(units[unit]!.text, locale, POINT_CHARS), startSeconds: Math.floor(units[unit]!.start) }));
}

/** One paragraph per time section that has speech: its best sentences (about √n/2 of its n, 1-4), in order. */
export function writeDetailed({ units, ranked, sections, locale }: Writing): string {
  const members = Array.from({ length: sections.count }, () => [] as number[]);
  for (const unit of ranked.order) members[sections.of(units[unit]!.start)]!.push(unit);
  const paragraphs: string[] = [];
  members.forEach((section, index) => {
    if (section.length === 0) return;
    const count = Math.min(MAX_PER_PARAGRAPH, Math.max(1, Math.ceil(Math.sqrt(section.length) / 2)));
    const picked = pickDistinct(section, count, ranked.similarity).sort(byTime);
    const sentences = picked.map((unit) => asSentence(units[unit]!.text, locale, POINT_CHARS));
    paragraphs.push(`${sections.label(index)}: ${joinSentences(sentences)}`);
  });
  return paragraphs.join('\n\n');
}
