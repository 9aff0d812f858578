import type { Cue } from './cue.ts';
import { decodeEntities } from './entities.ts';
import { splitLines } from './lines.ts';
import { TAG } from './markup.ts';
import { parseTiming } from './timestamps.ts';

const SKIPPED_BLOCK = /^(?:NOTE|STYLE|REGION)(?:[ \t]|$)/;
const VOICE = /^<v(?:\.[^\s>]*)?[ \t]+([^>]*)>$/;

/**
 * Cue text to plain text: tags go, character references are decoded. A voice tag that names a new
 * speaker becomes the ">> Name: " line start that captioners write, so normaliseCues marks it.
 */
function cueText(lines: string[], voice: { name?: string }): string {
  const raw = lines.length === 1 ? lines[0]! : lines.join('\n');
  if (!raw.includes('<')) return decodeEntities(raw);
  if (!raw.includes('<v')) return decodeEntities(raw.replace(TAG, '')); // no voices: the fast path
  const text = raw.replace(TAG, (tag: string, offset: number) => {
    const name = tag.charCodeAt(1) === 118 /* v */ ? VOICE.exec(tag)?.[1]?.trim() : undefined;
    if (!name || name === voice.name) return '';
    voice.name = name;
    return `${offset === 0 || raw[offset - 1] === '\n' ? '' : '\n'}>> ${name}: `;
  });
  return decodeEntities(text);
}

/**
 * Reads WebVTT as browsers do (blocks end at an empty line or at a line holding "-->"), skipping
 * the header (Kind:, Language:, YouTube's old "Style: … ##"), NOTE, STYLE and REGION blocks, cue
 * identifiers and cue settings. Tolerates a missing "WEBVTT" line when the caller knows better.
 */
export function parseVtt(input: string): Cue[] {
  const lines = splitLines(input);
  const count = lines.length;
  let i = 0;
  if (lines[0]?.startsWith('WEBVTT')) {
    i = 1;
    while (i < count && lines[i] !== '' && !lines[i]!.includes('-->')) i++;
  }
  const cues: Cue[] = [];
  const voice: { name?: string } = {};
  while (i < count) {
    let line = lines[i]!;
    if (line === '') {
      i++;
      continue;
    }
    if (!line.includes('-->')) {
      const next = lines[i + 1];
      if (!SKIPPED_BLOCK.test(line) && next !== undefined && next.includes('-->')) {
        line = next; // the line before was the cue identifier
        i++;
      } else {
        // NOTE, STYLE, REGION or anything unreadable: up to the next empty line or timing line.
        i++;
        while (i < count && lines[i] !== '' && !lines[i]!.includes('-->')) i++;
        continue;
      }
    }
    i++;
    const payload: string[] = [];
    while (i < count && lines[i] !== '' && !lines[i]!.includes('-->')) payload.push(lines[i++]!);
    const timing = parseTiming(line);
    if (timing) cues.push({ startMs: timing.startMs, endMs: timing.endMs, text: cueText(payload, voice) });
  }
  return cues;
}
