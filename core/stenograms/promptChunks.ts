/**
 * A transcript's pieces as the LLM reads them: lines opened by the second they start at
 * (`[754] >> ANNA: words…`, the summaries' line format and token estimate), cut into chunks by
 * time that fit the model's context together with the answer, which repeats every word of the chunk.
 */
import { z } from 'zod';
import { estimateTokens, formatLine, packConsecutive, type TranscriptLine } from '../llm/chunkTranscript.ts';
import type { Piece } from './readTranscript.ts';

/** A line of the prompt, and the pieces it was made of: [from, to) of the transcript's pieces. */
export interface PromptLine extends TranscriptLine {
  from: number;
  to: number;
}

export interface Chunk {
  lines: PromptLine[];
  from: number;
  to: number;
}

/** Lines of about this many characters, as the summaries' (short enough that a paragraph's start is near a line's). */
const LINE_CHARS = 240;

/*
 * A call's budget, as the summariser reckons it: the context less a 10% margin for the estimate's
 * error and the chat template, the note a malformed answer's retry adds, the messages' overhead and
 * headers, the system prompt, the schema and the speakers named so far. What is left holds the
 * chunk's lines and their answer, which repeats each line's words (ANSWER_FACTOR of their estimate,
 * for JSON's escapes) and may open a paragraph at each (PARAGRAPH_TOKENS for its keys, start and
 * speaker): so a line of quick turns ("Yes.") costs the answer far more than its own words.
 */
const SAFETY = 0.9;
const RETRY_NOTE_TOKENS = 250;
const MESSAGE_OVERHEAD = 24;
const HEADER_TOKENS = 40;
export const NAMES_TOKENS = 160;
const ANSWER_FACTOR = 1.1;
const PARAGRAPH_TOKENS = 20;
const ANSWER_BASE = 64;
// Many models cap an answer at 4096 tokens whatever their context: a chunk's lines and answer
// together stay under it, so the answer does.
const MAX_ANSWER_TOKENS = 4096;
// Below this a chunk is a sentence or two: the model could not tell who speaks.
const MIN_CHUNK_TOKENS = 300;

const promptCost = (line: TranscriptLine) => estimateTokens(formatLine(line)) + 1;
const answerCost = (line: TranscriptLine) => Math.ceil(estimateTokens(line.text) * ANSWER_FACTOR) + PARAGRAPH_TOKENS;

/** max_tokens for the answer to a chunk of these lines. */
export const answerTokens = (lines: readonly TranscriptLine[]) => lines.reduce((sum, line) => sum + answerCost(line), ANSWER_BASE);

/** The tokens a chunk's lines and their answer may take together, given what else a call carries; throws when the context is too small. */
export function chunkBudget(contextTokens: number, fixedText: string, schema: z.ZodType): number {
  const fixed =
    RETRY_NOTE_TOKENS +
    MESSAGE_OVERHEAD +
    HEADER_TOKENS +
    NAMES_TOKENS +
    ANSWER_BASE +
    estimateTokens(fixedText) +
    estimateTokens(JSON.stringify(z.toJSONSchema(schema))) +
    20;
  const budget = Math.min(Math.floor(contextTokens * SAFETY) - fixed, MAX_ANSWER_TOKENS - ANSWER_BASE);
  if (budget < MIN_CHUNK_TOKENS)
    throw new Error(`a context of ${contextTokens} tokens leaves no room for a transcript chunk and its word-for-word answer`);
  return budget;
}

/** How a piece reads in the prompt: a turn with its marker (and name), a stage direction as written. */
function pieceText(piece: Piece): string {
  if (piece.kind === 'direction') return piece.text;
  const words = piece.fragments.map((fragment) => fragment.text).join(' ');
  if (!piece.turn) return words;
  return piece.named ? `>> ${piece.speaker}: ${words}` : `>> ${words}`;
}

/** The pieces as prompt lines; a turn or a pause starts a line, so a marker always opens one. */
export function promptLines(pieces: readonly Piece[]): PromptLine[] {
  const lines: PromptLine[] = [];
  let current: PromptLine | undefined;
  pieces.forEach((piece, index) => {
    const text = pieceText(piece);
    const opens = piece.kind === 'speech' && (piece.turn || piece.pause);
    if (current && !opens && current.text.length + 1 + text.length <= LINE_CHARS) {
      current.text += ` ${text}`;
      current.to = index + 1;
    } else {
      current = { start: Math.floor(piece.start), text, from: index, to: index + 1 };
      lines.push(current);
    }
  });
  return lines;
}

/**
 * The lines in consecutive chunks within the budget, each line costing its prompt and its answer,
 * of about equal size as the summaries' chunkLines makes them (so the last is no scrap); chunkLines
 * itself counts only the prompt.
 */
export function chunkPrompt(lines: PromptLine[], budget: number): Chunk[] {
  const costs = lines.map((line) => promptCost(line) + answerCost(line));
  const total = costs.reduce((sum, cost) => sum + cost, 0);
  const longest = costs.reduce((max, cost) => Math.max(max, cost), 0);
  const even = Math.ceil(total / Math.max(1, Math.ceil(total / budget))) + longest;
  return packConsecutive(costs, Math.min(budget, even)).map((run) => {
    const chunk = run.map((index) => lines[index]!);
    return { lines: chunk, from: chunk[0]!.from, to: chunk.at(-1)!.to };
  });
}
