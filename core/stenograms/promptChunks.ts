/**
 * A transcript's pieces as the LLM reads them: lines opened by the second they start at
 * (`[754] >> ANNA: words…`, the summaries' line format), cut into chunks by time that fit the
 * model's context together with the answer, which repeats every word of the chunk.
 */
import { z } from 'zod';
import { chunkLines, estimateTokens, formatLine, type TranscriptLine } from '../summaries/chunkTranscript.ts';
import type { Piece } from './readTranscript.ts';

/** A line of the prompt, and the pieces it was made of: [from, to) of the transcript's pieces. */
export interface PromptLine extends TranscriptLine { from: number; to: number }

export interface Chunk { lines: PromptLine[]; from: number; to: number }

/** Lines of about this many characters, as the summaries' (short enough that a paragraph's start is near a line's). */
const LINE_CHARS = 240;

/*
 * A call's budget, as the summariser reckons it: the context less a 10% margin for the estimate's
 * error and the chat template, the note a malformed answer's retry adds, the messages' overhead and
 * headers, the system prompt, the schema and the speakers named so far. The answer repeats the
 * chunk's words (without the [seconds]) inside JSON, with a start and a speaker per paragraph:
 * estimated at ANSWER_FACTOR times the chunk's tokens, plus ANSWER_BASE.
 */
const SAFETY = 0.9;
const RETRY_NOTE_TOKENS = 250;
const MESSAGE_OVERHEAD = 24;
const HEADER_TOKENS = 40;
export const NAMES_TOKENS = 160;
const ANSWER_FACTOR = 1.25;
const ANSWER_BASE = 64;
// Many models cap an answer at 4096 tokens whatever their context: a chunk is no more than that can repeat.
const MAX_ANSWER_TOKENS = 4096;
// Below this a chunk is a sentence or two: the model could not tell who speaks.
const MIN_CHUNK_TOKENS = 200;

const linesTokens = (lines: readonly TranscriptLine[]) => lines.reduce((sum, line) => sum + estimateTokens(formatLine(line)) + 1, 0);

/** max_tokens for the answer to a chunk of these lines. */
export const answerTokens = (lines: readonly TranscriptLine[]) => Math.ceil(linesTokens(lines) * ANSWER_FACTOR) + ANSWER_BASE;

/** The tokens a chunk's lines may take, given what else a call carries; throws when the context is too small for any. */
export function chunkBudget(contextTokens: number, fixedText: string, schema: z.ZodType): number {
  const fixed = RETRY_NOTE_TOKENS + MESSAGE_OVERHEAD + HEADER_TOKENS + NAMES_TOKENS + estimateTokens(fixedText) + estimateTokens(JSON.stringify(z.toJSONSchema(schema))) + 20;
  const room = Math.floor(contextTokens * SAFETY) - fixed - ANSWER_BASE;
  const budget = Math.min(Math.floor(room / (1 + ANSWER_FACTOR)), Math.floor((MAX_ANSWER_TOKENS - ANSWER_BASE) / ANSWER_FACTOR));
  if (budget < MIN_CHUNK_TOKENS) throw new Error(`a context of ${contextTokens} tokens leaves no room for a transcript chunk and its word-for-word answer`);
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

/** The lines in chunks of about equal size within the budget (the summaries' chunking), with the pieces each covers. */
export function chunkPrompt(lines: PromptLine[], budget: number): Chunk[] {
  const chunks: Chunk[] = [];
  let at = 0;
  for (const { length } of chunkLines(lines, budget)) {
    const chunk = lines.slice(at, at + length);
    chunks.push({ lines: chunk, from: chunk[0]!.from, to: chunk.at(-1)!.to });
    at += length;
  }
  return chunks;
}
