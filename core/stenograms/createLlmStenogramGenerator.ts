/**
 * Stenograms by an LLM: the transcript, read as the offline generator reads it, is cut by time into
 * chunks that fit the model's context with their answer; chunk after chunk, the model splits the
 * words into paragraphs and says who speaks each, told the names used so far so that labels stay
 * the same across chunks (which is why the chunks are asked one after another). Every answer is
 * checked word for word against its chunk (wordGuard) and its speakers against the names the
 * captions give and those the document has used (knownSpeaker); a chunk that fails either, or whose
 * answer is not the JSON asked for, is the offline generator's text instead and counts in
 * fallbackChunks.
 */
import { z } from 'zod';
import { LlmError } from '../llm/llmError.ts';
import type { LlmClient, TokenUsage } from '../llm/types.ts';
import { estimateTokens, formatLine, nearestLineStart } from '../llm/chunkTranscript.ts';
import type { Tokeniser } from '../text/tokenise.ts';
import { escapeRegExp } from '../text/escapeRegExp.ts';
import { splitDirections } from './captionText.ts';
import { inLanguage, isNumberedSpeaker } from './speakerLabels.ts';
import type { OfflineStenogramGenerator } from './createOfflineStenogramGenerator.ts';
import { progressSteps, type GenerateOptions } from './progressSteps.ts';
import { answerTokens, chunkBudget, chunkPrompt, NAMES_TOKENS, promptLines, type Chunk } from './promptChunks.ts';
import type { Piece } from './readTranscript.ts';
import type { GeneratedStenogram, StenogramGenerator, StenogramInput } from './stenogram.ts';
import { renderStenogram } from './stenogramMarkdown.ts';
import { comparableWords, unfaithfulness } from './wordGuard.ts';
import { wordSpans } from './words.ts';
import type { Block } from './writeParagraphs.ts';

const stenogramChunk = z.object({
  paragraphs: z
    .array(
      z.object({
        startSeconds: z.number().int().min(0).describe('the bracketed second of the line where the paragraph starts'),
        speaker: z.string().min(1).max(80).describe('the name the transcript gives the speaker, else "Speaker 1", "Speaker 2", …'),
        text: z.string().min(1).describe("the paragraph's words exactly as the transcript has them"),
      }),
    )
    .min(1)
    .describe('in the order of the transcript'),
});
type Paragraph = z.infer<typeof stenogramChunk>['paragraphs'][number];

const SYSTEM =
  "You write a stenogram of one part of a video's transcript: its words split into paragraphs, each labelled with its speaker. " +
  'Keep every word exactly as it is, in the same order: do not correct, add, drop, shorten or reword anything, and keep sound descriptions in square brackets as they are. ' +
  'Every transcript line starts with the second of the video at which it is said, in square brackets, like [754]; that is not part of the words. ' +
  '">>" marks a change of speaker, and a NAME: right after it names the new speaker: use that name as the speaker and leave the marker and the name out of the text. ' +
  'Call speakers the transcript does not name "Speaker 1", "Speaker 2" and so on, and use the names given as used so far for the same people. ' +
  "Start a new paragraph at every change of speaker, and where a speaker's subject changes or a paragraph grows past about 120 words. " +
  "startSeconds is the bracketed second of the line where the paragraph's first word is. Answer with JSON only.";

const norm = (name: string) => name.replace(/\s+/g, ' ').replace(/:+$/, '').trim();

/** Who has spoken so far, for the next chunk's prompt and for spelling names one way. */
interface Speakers {
  /** The transcript's: unnamed voices are labelled in it. */
  language: string;
  names: Map<string, string>;
  order: string[];
  current: string | null;
}

/** `name` as first written (case and spacing aside), a numbered "Speaker N" in the transcript's language. */
const spelt = (speakers: Speakers, name: string) => {
  const written = inLanguage(norm(name) || 'Speaker 1', speakers.language);
  return speakers.names.get(written.toLowerCase()) ?? written;
};

/**
 * Whether a model's label names a speaker the model may name: one the captions name anywhere, one
 * the document has already used, or a numbered "Speaker N" as the prompt asks for unnamed voices
 * (written in the transcript's language, as the offline labels are).
 * Anything else (markup, a name the model made up or read out of the words, a sentence) refuses the
 * chunk rather than being swapped for a neutral label: a model that invents one speaker has not
 * followed the captions' turns either, and the offline text's labels come from the captions.
 */
function knownSpeaker(speakers: Speakers, name: string): boolean {
  const label = spelt(speakers, name);
  return speakers.names.has(label.toLowerCase()) || isNumberedSpeaker(label, speakers.language);
}

/** `name` as first written, remembered from now on. */
function speakerOf(speakers: Speakers, name: string): string {
  const speaker = spelt(speakers, name);
  speakers.names.set(speaker.toLowerCase(), speaker);
  return speaker;
}

function speakersNote(speakers: Speakers): string {
  if (speakers.order.length === 0) return 'No speakers are named yet.\n';
  const note = (names: string[]) =>
    `Speakers so far: ${names.join(', ')}. Speaking at the end of the previous part: ${speakers.current}.\n`;
  // The budget keeps room for NAMES_TOKENS; a long cast loses its earliest names first.
  let names = speakers.order;
  while (names.length > 1 && estimateTokens(note(names)) > NAMES_TOKENS) names = names.slice(1);
  return note(names);
}

/** The answer's paragraphs as blocks: starts placed on the chunk's lines and in order, directions on lines of their own. */
function answerBlocks(paragraphs: Paragraph[], chunk: Chunk, speakers: Speakers, tokeniser: Tokeniser): Block[] {
  const blocks: Block[] = [];
  const first = chunk.lines[0]!.start;
  const last = chunk.lines.at(-1)!.start;
  let start = first;
  for (const paragraph of paragraphs) {
    start = Math.max(start, nearestLineStart(chunk.lines, Math.min(last, Math.max(first, paragraph.startSeconds))));
    const speaker = spelt(speakers, paragraph.speaker);
    // A model that copies the line's ">> NAME:" into the text: that is the tag, not words.
    const text = paragraph.text.replace(/^\s*(?:>>\s*)+/, '').replace(new RegExp(`^${escapeRegExp(speaker)}:\\s*`, 'i'), '');
    for (const part of splitDirections(text)) {
      if (part.direction) blocks.push({ kind: 'direction', start, text: part.text });
      else blocks.push({ kind: 'paragraph', start, speaker, text: part.text, words: wordSpans(part.text, tokeniser).length });
    }
  }
  return blocks;
}

const blockText = (blocks: readonly Block[]) => blocks.map((block) => block.text).join(' ');
function piecesText(pieces: readonly Piece[]): string {
  return pieces
    .map((piece) => (piece.kind === 'direction' ? piece.text : piece.fragments.map((fragment) => fragment.text).join(' ')))
    .join(' ');
}

interface Run {
  client: LlmClient;
  offline: OfflineStenogramGenerator;
  pieces: Piece[];
  tokeniser: Tokeniser;
  title: string;
  speakers: Speakers;
  usage: TokenUsage;
  signal?: AbortSignal;
}

/** One chunk's blocks: the model's when they keep the words, else the offline text of its pieces. */
async function writeChunk(run: Run, chunk: Chunk, index: number, of: number): Promise<{ blocks: Block[]; fellBack: boolean }> {
  const from = chunk.lines[0]!.start;
  const to = chunk.lines.at(-1)!.start;
  const user = `${run.title}${speakersNote(run.speakers)}Part ${index + 1} of ${of}, from [${from}] to [${to}]:\n${chunk.lines.map(formatLine).join('\n')}`;
  const pieces = run.pieces.slice(chunk.from, chunk.to);
  let blocks: Block[] | undefined;
  try {
    const { value, usage } = await run.client.completeJson({
      system: SYSTEM,
      user,
      schema: stenogramChunk,
      schemaName: 'stenogram_chunk',
      maxOutputTokens: answerTokens(chunk.lines),
      ...(run.signal ? { signal: run.signal } : {}),
    });
    run.usage.prompt += usage.prompt;
    run.usage.completion += usage.completion;
    if (value.paragraphs.every((paragraph) => knownSpeaker(run.speakers, paragraph.speaker)))
      blocks = answerBlocks(value.paragraphs, chunk, run.speakers, run.tokeniser);
  } catch (error) {
    // Twice JSON that is not a stenogram: the same as an unfaithful one. Anything else stops the run.
    if (!(error instanceof LlmError && error.kind === 'malformed')) throw error;
  }
  const faithful =
    blocks !== undefined &&
    unfaithfulness(comparableWords(piecesText(pieces), run.tokeniser), comparableWords(blockText(blocks), run.tokeniser)) === null;
  const written = (faithful ? blocks! : run.offline.write(pieces)).map((block): Block => {
    if (block.kind !== 'paragraph') return block;
    const speaker = speakerOf(run.speakers, block.speaker);
    if (!run.speakers.order.includes(speaker)) run.speakers.order.push(speaker);
    run.speakers.current = speaker;
    return { ...block, speaker };
  });
  return { blocks: written, fellBack: !faithful };
}

async function generate(
  client: LlmClient,
  offline: OfflineStenogramGenerator,
  input: StenogramInput,
  options: GenerateOptions,
): Promise<GeneratedStenogram> {
  const step = progressSteps(options);
  await step({ stage: 'reading', percent: 0 });
  if (input.cues.length === 0) throw new Error('the transcript has no cues: nothing to write');
  const transcript = await offline.read(input);
  const title = input.title ? `Video title: ${input.title.replace(/\s+/g, ' ').slice(0, 200)}\n` : '';
  const chunks = chunkPrompt(promptLines(transcript.pieces), chunkBudget(client.contextTokens, SYSTEM + title, stenogramChunk));
  const speakers: Speakers = { language: transcript.language, names: new Map(), order: [], current: null };
  // Names the captions give are spelt as the captions spell them, whatever the model writes.
  for (const piece of transcript.pieces) if (piece.kind === 'speech' && piece.named) speakerOf(speakers, piece.speaker);
  const run: Run = {
    client,
    offline,
    pieces: transcript.pieces,
    tokeniser: transcript.tokeniser,
    title,
    speakers,
    usage: { prompt: 0, completion: 0 },
    ...(options.signal ? { signal: options.signal } : {}),
  };
  await step({ stage: 'reading', percent: 5 });

  const blocks: Block[] = [];
  let fallbackChunks = 0;
  for (const [index, chunk] of chunks.entries()) {
    const written = await writeChunk(run, chunk, index, chunks.length);
    blocks.push(...written.blocks);
    if (written.fellBack) fallbackChunks++;
    await step({ stage: 'chunk', chunk: index + 1, of: chunks.length, percent: 5 + Math.round((90 * (index + 1)) / chunks.length) });
  }
  const stenogram = renderStenogram(input, transcript.language, blocks);
  await step({ stage: 'writing', percent: 100 });
  return {
    ...stenogram,
    language: transcript.language,
    llmModel: client.model,
    tokensUsed: run.usage,
    chunks: chunks.length,
    fallbackChunks,
  };
}

/** The LLM generator; `offline` reads the transcript and writes the chunks whose answers fail the guard. */
export function createLlmStenogramGenerator(client: LlmClient, offline: OfflineStenogramGenerator): StenogramGenerator {
  return { model: client.model, generate: (input, options = {}) => generate(client, offline, input, options) };
}
