/**
 * A transcript as an LLM reads it: lines of text, each opened by the second of the video it starts
 * at (`[754] …`), cut into chunks whose estimated size fits a token budget.
 */
import type { TranscriptCue } from '../subtitles/transcriptCue.ts';

/** Some cues joined into one line of the prompt, at the first cue's start (whole seconds). */
export interface TranscriptLine {
  start: number;
  text: string;
}

/**
 * Lines of at most about this many characters: long enough that the `[seconds]` prefixes cost
 * little (about 3%), short enough that a key point's time is within a few cues of where it is said.
 */
const LINE_CHARS = 240;

/**
 * A conservative token count without a tokenizer: English runs at about 4 characters per token
 * in GPT-style tokenizers, so ASCII is counted at 3; other alphabetic scripts (accents, Cyrillic,
 * Greek, Arabic…) take more tokens per character, counted at 2; CJK and the like can be one token
 * per character or more, counted at 1 each. Overestimating only costs an extra chunk.
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let alphabetic = 0;
  let wide = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) ascii++;
    else if (code < 0x2e80) alphabetic++;
    else wide++;
  }
  return Math.ceil(ascii / 3 + alphabetic / 2 + wide);
}

/** Cues in time order as prompt lines: whitespace collapsed, empty and repeated cues dropped, long cues split at spaces. */
export function transcriptLines(cues: readonly TranscriptCue[]): TranscriptLine[] {
  const lines: TranscriptLine[] = [];
  let current: TranscriptLine | undefined;
  let previous = '';
  for (const cue of [...cues].sort((a, b) => a.start - b.start)) {
    const text = cue.text.replace(/\s+/g, ' ').trim();
    // Auto-generated tracks repeat a cue's text in the next one as it scrolls.
    if (!text || text === previous) continue;
    previous = text;
    for (const piece of splitLong(text)) {
      if (current && current.text.length + 1 + piece.length <= LINE_CHARS) {
        current.text += ` ${piece}`;
      } else {
        current = { start: Math.max(0, Math.floor(cue.start)), text: piece };
        lines.push(current);
      }
    }
  }
  return lines;
}

function splitLong(text: string): string[] {
  if (text.length <= LINE_CHARS) return [text];
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > LINE_CHARS) {
    const space = rest.lastIndexOf(' ', LINE_CHARS);
    const cut = space > LINE_CHARS / 2 ? space : LINE_CHARS;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

export const formatLine = (line: TranscriptLine) => `[${line.start}] ${line.text}`;

/**
 * Consecutive runs of lines, each estimated at no more than `budgetTokens` once formatted (one per
 * line of the prompt), and of about equal size, so the last chunk is not a scrap with no context.
 */
export function chunkLines(lines: readonly TranscriptLine[], budgetTokens: number): TranscriptLine[][] {
  const costs = lines.map((line) => estimateTokens(formatLine(line)) + 1);
  const total = costs.reduce((sum, cost) => sum + cost, 0);
  const count = Math.max(1, Math.ceil(total / budgetTokens));
  const longest = costs.reduce((max, cost) => Math.max(max, cost), 0);
  const target = Math.min(budgetTokens, Math.ceil(total / count) + longest);
  return packConsecutive(costs, target).map((run) => run.map((index) => lines[index]!));
}

/** Indexes of consecutive items in runs whose costs add up to at most `limit`, though a run always takes `atLeast` items. */
export function packConsecutive(costs: readonly number[], limit: number, atLeast = 1): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  let size = 0;
  costs.forEach((cost, index) => {
    if (run.length >= atLeast && size + cost > limit) {
      runs.push(run);
      run = [];
      size = 0;
    }
    run.push(index);
    size += cost;
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/** The line start nearest to `seconds`, so a key point lands on a moment the transcript has (lines sorted by start). */
export function nearestLineStart(lines: readonly TranscriptLine[], seconds: number): number {
  let low = 0;
  let high = lines.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (lines[middle]!.start < seconds) low = middle + 1;
    else high = middle;
  }
  const after = lines[low]!.start;
  const before = low > 0 ? lines[low - 1]!.start : after;
  return seconds - before <= after - seconds ? before : after;
}
