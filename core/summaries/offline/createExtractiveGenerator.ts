/**
 * The built-in summary generator for when no LLM is configured (afterimage-extractive-1): an
 * extractive summary, every sentence of it quoted from the transcript. Sentence-sized units
 * (buildUnits) are ranked by TextRank, PageRank over a sparse TF-IDF cosine graph of the units
 * (LexRank's weighting), with the detected language's stopwords removed; key points, tldr and
 * paragraphs are the best units, spread over the video's time sections; tags are salient terms.
 * Deterministic, and linear in the transcript's length apart from sorting.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  summaryContent,
  type GeneratedSummary,
  type SummaryContent,
  type SummaryGenerator,
  type SummaryInput,
  type SummaryProgress,
} from '../summary.ts';
import { buildUnits, isPunctuated, type Unit } from './buildUnits.ts';
import { pageRank } from './pageRank.ts';
import { keyPointCount, pickKeyPoints, type Ranked } from './pickKeyPoints.ts';
import { repeatMeasure } from './repeats.ts';
import { salientTags } from './salientTags.ts';
import { similarityGraph } from './similarityGraph.ts';
import { soundOnlySummary } from './soundOnlySummary.ts';
import { spokenCues, type SpokenCue } from '../../subtitles/stageDirections.ts';
import { timeSections } from './timeSections.ts';
import { tfidf } from './tfidf.ts';
import { writeDetailed, writeKeyPoints, writeTitle, writeTldr, type Writing } from './writeSummary.ts';

const MODEL = 'afterimage-extractive-1';
// A unit with fewer content terms than this ("yeah so that's it") is never quoted, if others are.
const MIN_TERMS = 3;
// TextRank favours short units made of the talk's most central word ("Hey, ChatGPT."): a unit's
// score is scaled down below this many distinct content terms.
const FULL_TERMS = 6;

type Step = (stage: SummaryProgress['stage'], percent: number) => Promise<void>;

/** Reports progress, lets the event loop run (so an abort can arrive) and stops if aborted. */
function stepper(signal: AbortSignal | undefined, onProgress: ((progress: SummaryProgress) => void) | undefined): Step {
  return async (stage, percent) => {
    signal?.throwIfAborted();
    onProgress?.({ stage, percent });
    await nextTurn();
    signal?.throwIfAborted();
  };
}

/** Unit indexes worth quoting, best first (ties in video order). */
function rankUnits(units: readonly Unit[]): Ranked {
  const terms = units.map((unit) => unit.words.flatMap((word) => (word.term ? [word.term] : [])));
  const model = tfidf(terms);
  const scores = pageRank(similarityGraph(model));
  const all = terms.map((_, unit) => unit);
  const candidates = all.filter((unit) => terms[unit]!.length >= MIN_TERMS);
  const weight = all.map((unit) => scores[unit]! * Math.min(1, new Set(terms[unit]).size / FULL_TERMS));
  const order = (candidates.length > 0 ? candidates : all).sort((a, b) => weight[b]! - weight[a]! || a - b);
  return { order, similarity: repeatMeasure(units, model.vectors) };
}

/**
 * The language tools (franc and iso-639-3's table, the stopword lists, the stemmers), loaded with the
 * first summary: a process that writes none does not pay for them at start-up.
 */
const languageTools = () =>
  Promise.all([import('../../text/detectLanguage.ts'), import('../../text/tokenise.ts'), import('../../text/stem.ts')]);

async function summariseSpeech(input: SummaryInput, cues: SpokenCue[], step: Step): Promise<SummaryContent> {
  const [{ detectLanguage }, { createTokeniser }, { stemmerFor }] = await languageTools();
  const language = detectLanguage(cues.map((cue) => cue.text).join(' '), input.language);
  const tokeniser = createTokeniser(language);
  const units = buildUnits(cues, tokeniser);
  await step('reading', 40);
  const ranked = rankUnits(units);
  await step('writing', 70);
  const duration = input.cues.reduce((end, cue) => Math.max(end, cue.end), 0);
  const writing: Writing = {
    units,
    ranked,
    sections: timeSections(duration),
    locale: tokeniser.locale,
    language,
    punctuated: isPunctuated(cues),
  };
  const chosen = pickKeyPoints(ranked, (unit) => units[unit]!.start, duration, keyPointCount(duration, ranked.order.length));
  return {
    title: writeTitle(writing, input.title),
    tldr: writeTldr(writing),
    keyPoints: writeKeyPoints(writing, chosen),
    detailedSummary: writeDetailed(writing),
    tags: salientTags(units, stemmerFor(language)),
    language,
  };
}

async function summarise(
  input: SummaryInput,
  options: { signal?: AbortSignal; onProgress?: (progress: SummaryProgress) => void } = {},
): Promise<GeneratedSummary> {
  const step = stepper(options.signal, options.onProgress);
  await step('reading', 10);
  if (input.cues.length === 0) throw new Error('the transcript has no cues: nothing to summarise');
  const cues = spokenCues(input.cues);
  // Only [Music] and the like: an honest summary that says so (see soundOnlySummary).
  const content = cues.length > 0 ? await summariseSpeech(input, cues, step) : soundOnlySummary(input.title, input.cues);
  await step('writing', 100);
  return { ...summaryContent.parse(content), llmModel: MODEL, tokensUsed: null };
}

/** The offline generator: no network, no model, the same summary for the same input. */
export function createExtractiveGenerator(): SummaryGenerator {
  return { model: MODEL, summarise };
}
