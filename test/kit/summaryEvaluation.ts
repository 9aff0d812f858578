/**
 * Scores the offline generator against the hand-written references of summaryReferences.ts:
 * - tag precision: the share of a summary's tags that a reference lists (compared by their words'
 *   stems, so "users" matches "user"; a second tag with the same stems counts as wrong);
 * - moment coverage: the share of the reference's key moments that some key point starts in (or up
 *   to 10 s before, as a sentence may lead into a topic).
 */
import { readFileSync } from 'node:fs';
import { parse } from '../../core/subtitles/parse.ts';
import type { GeneratedSummary, SummaryGenerator } from '../../core/summaries/summary.ts';
import type { TranscriptCue } from '../../core/subtitles/transcriptCue.ts';
import { stemmerFor } from '../../core/text/stem.ts';
import { realFixture } from './realFixtures.ts';
import { SUMMARY_REFERENCES, type SummaryReference } from './summaryReferences.ts';

const LEAD_SECONDS = 10;

export interface ReferenceScore {
  file: string;
  language: string;
  kind: SummaryReference['kind'];
  tags: string[];
  /** Tags the reference does not accept, or that repeat an earlier tag's stems. */
  wrongTags: string[];
  tagPrecision: number;
  keyPoints: number;
  /** The reference's moments no key point starts in. */
  missedMoments: string[];
  momentCoverage: number;
}

/** A reference's caption file as the pipeline hands it to a generator: seconds, one line of text. */
function referenceTranscript(reference: SummaryReference): TranscriptCue[] {
  const cues = parse(readFileSync(realFixture(reference.file), 'utf8'), reference.file.split('.').at(-1));
  return cues.map((cue) => ({ start: cue.startMs / 1000, end: cue.endMs / 1000, text: cue.text }));
}

function scoreSummary(reference: SummaryReference, summary: Pick<GeneratedSummary, 'tags' | 'keyPoints'>): ReferenceScore {
  const stem = stemmerFor(reference.language);
  const key = (tag: string) =>
    tag
      .toLocaleLowerCase(reference.language)
      .split(/[\s-]+/)
      .filter(Boolean)
      .map(stem)
      .join(' ');
  const accepted = new Set(reference.tags.map(key));
  const seen = new Set<string>();
  const wrongTags = summary.tags.filter((tag) => {
    const k = key(tag);
    const wrong = !accepted.has(k) || seen.has(k);
    seen.add(k);
    return wrong;
  });
  const starts = summary.keyPoints.map((point) => point.startSeconds);
  const missed = reference.moments.filter((moment) => !starts.some((at) => at >= moment.from - LEAD_SECONDS && at <= moment.to));
  return {
    file: reference.file,
    language: reference.language,
    kind: reference.kind,
    tags: summary.tags,
    wrongTags,
    tagPrecision: summary.tags.length ? (summary.tags.length - wrongTags.length) / summary.tags.length : 0,
    keyPoints: summary.keyPoints.length,
    missedMoments: missed.map((moment) => moment.about),
    momentCoverage: (reference.moments.length - missed.length) / reference.moments.length,
  };
}

/** Every reference summarised by `generator` and scored, with the means over them. */
export async function evaluateGenerator(generator: SummaryGenerator) {
  const scores: ReferenceScore[] = [];
  for (const reference of SUMMARY_REFERENCES) {
    const summary = await generator.summarise({ videoId: 'evaluation', title: null, language: null, cues: referenceTranscript(reference) });
    scores.push(scoreSummary(reference, summary));
  }
  const mean = (pick: (score: ReferenceScore) => number) => scores.reduce((sum, score) => sum + pick(score), 0) / scores.length;
  return { scores, tagPrecision: mean((s) => s.tagPrecision), momentCoverage: mean((s) => s.momentCoverage) };
}
