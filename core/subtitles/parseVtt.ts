import type { Cue } from './cue.ts';
import { decodeEntities } from '../text/entities.ts';
import { TAG } from './markup.ts';
import { parseTiming } from './timestamps.ts';

const SKIPPED_BLOCK = /^(?:NOTE|STYLE|REGION)(?:[ \t]|$)/;
const VOICE = /^<v(?:\.[^\s>]*)?[ \t]+([^>]*)>$/;

/**
 * Cue text to plain text: tags go, character references are decoded. A voice tag that names a new
 * speaker becomes the ">> Name: " line start that captioners write, so normaliseCues marks it.
 */
function cueText(raw: string, voice: { name?: string }): string {
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
 *
 * It walks the text by index instead of splitting it into lines, and a cue's text is one slice of
 * the input: auto-caption files run to megabytes, and this halves the garbage.
 */
export function parseVtt(input: string): Cue[] {
  let text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
  const length = text.length;

  // The current line is text[start, end); end is its "\n" or the end of the text.
  let start = 0;
  let end = 0;
  const endOf = (from: number) => {
    const at = text.indexOf('\n', from);
    return at < 0 ? length : at;
  };
  // The next "-->" at or after the current line, found once and reused: lines are visited in order.
  let arrow = text.indexOf('-->');
  const hasArrow = (from: number, to: number) => {
    if (arrow >= 0 && arrow < from) arrow = text.indexOf('-->', from);
    return arrow >= 0 && arrow < to;
  };
  /** Moves start to the next empty line or timing line at or after `from` (or past the end). */
  const skipBlock = (from: number) => {
    for (start = from; start < length; start = end + 1) {
      end = endOf(start);
      if (end === start || hasArrow(start, end)) return;
    }
  };

  end = endOf(0);
  if (text.startsWith('WEBVTT')) skipBlock(end + 1); // the header

  const cues: Cue[] = [];
  const voice: { name?: string } = {};
  while (start < length) {
    end = endOf(start);
    if (end === start) {
      start++;
      continue;
    }
    let timingLine: string;
    if (hasArrow(start, end)) {
      timingLine = text.slice(start, end);
    } else {
      const next = end + 1;
      const nextEnd = next < length ? endOf(next) : next;
      if (next < length && hasArrow(next, nextEnd) && !SKIPPED_BLOCK.test(text.slice(start, end))) {
        timingLine = text.slice(next, nextEnd); // the line before was the cue identifier
        end = nextEnd;
      } else {
        skipBlock(next); // NOTE, STYLE, REGION or anything unreadable
        continue;
      }
    }
    const payload = end + 1;
    skipBlock(payload);
    const timing = parseTiming(timingLine);
    if (timing)
      cues.push({
        startMs: timing.startMs,
        endMs: timing.endMs,
        text: cueText(payload < start ? text.slice(payload, start - 1) : '', voice),
      });
  }
  return cues;
}
