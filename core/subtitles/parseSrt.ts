import type { Cue } from './cue.ts';
import { decodeEntities } from '../text/entities.ts';
import { splitLines } from './lines.ts';
import { stripTags } from './markup.ts';
import { parseTiming } from './timestamps.ts';

const INDEX = /^\s*\d+\s*$/;

/**
 * Reads SRT: optional index line, timing line (timestamps as WebVTT's, comma or dot before exactly
 * three digits of milliseconds; see parseTiming), text up to a blank line.
 * Formatting tags (<i>, <font …>) go and character references are decoded, which is also how
 * renderSrt escapes text that would otherwise read as markup. A cue without text is kept empty
 * (yt-dlp writes one first); a timing line with no blank line before it still starts a new cue.
 */
export function parseSrt(input: string): Cue[] {
  const cues: Cue[] = [];
  let current: { startMs: number; endMs: number; lines: string[] } | undefined;
  const finish = () => {
    if (current) cues.push({ startMs: current.startMs, endMs: current.endMs, text: decodeEntities(stripTags(current.lines.join('\n'))) });
    current = undefined;
  };
  for (const line of splitLines(input)) {
    const timing = line.includes('-->') ? parseTiming(line, 'srt') : undefined;
    if (timing) {
      // No blank line before this timing line: a number just above it is its index, not text.
      if (current && current.lines.length > 0 && INDEX.test(current.lines.at(-1)!)) current.lines.pop();
      finish();
      current = { ...timing, lines: [] };
    } else if (line.trim() === '') {
      finish();
    } else if (current) {
      current.lines.push(line);
    }
    // Anything else between cues is an index line or junk.
  }
  finish();
  return cues;
}
