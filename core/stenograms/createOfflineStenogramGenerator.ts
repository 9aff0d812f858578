/**
 * The built-in stenogram generator for when no LLM is configured (afterimage-stenogram-1): the
 * transcript's own words, each once and in order, in paragraphs tagged with speakers as far as the
 * captions' conventions tell them (see readTranscript, speakerLabels, writeParagraphs). No network,
 * no model, the same stenogram for the same input, linear in the transcript's length.
 */
import { progressSteps, type GenerateOptions } from './progressSteps.ts';
import type { Piece, Transcript } from './readTranscript.ts';
import type { GeneratedStenogram, StenogramGenerator, StenogramInput } from './stenogram.ts';
import { renderStenogram } from './stenogramMarkdown.ts';
import { writeParagraphs, type Block } from './writeParagraphs.ts';

const MODEL = 'afterimage-stenogram-1';

/**
 * The offline generator, and the two halves of its work the LLM generator builds on: reading the
 * transcript (its prompt is made of the pieces) and writing pieces as paragraphs (the text of a chunk
 * whose LLM answer fails the word-for-word guard).
 */
export interface OfflineStenogramGenerator extends StenogramGenerator {
  read(input: Pick<StenogramInput, 'language' | 'cues'>): Promise<Transcript>;
  write(pieces: readonly Piece[]): Block[];
}

/**
 * readTranscript, loaded with the first transcript read: its language tools (franc and iso-639-3's
 * table, the stopword lists) are no cost at start-up to a process that writes no stenogram.
 */
async function read(input: Pick<StenogramInput, 'language' | 'cues'>): Promise<Transcript> {
  const { readTranscript } = await import('./readTranscript.ts');
  return readTranscript(input);
}

async function generate(input: StenogramInput, options: GenerateOptions = {}): Promise<GeneratedStenogram> {
  const step = progressSteps(options);
  await step({ stage: 'reading', percent: 0 });
  if (input.cues.length === 0) throw new Error('the transcript has no cues: nothing to write');
  const transcript = await read(input);
  await step({ stage: 'writing', percent: 50 });
  const written = renderStenogram(input, transcript.language, writeParagraphs(transcript.pieces));
  await step({ stage: 'writing', percent: 100 });
  return { ...written, language: transcript.language, llmModel: MODEL, tokensUsed: null, chunks: 0, fallbackChunks: 0 };
}

export function createOfflineStenogramGenerator(): OfflineStenogramGenerator {
  return { model: MODEL, generate, read, write: writeParagraphs };
}
