import type { Cue } from './cue.ts';
import { decodeEntities } from '../text/entities.ts';
import { TAG } from './markup.ts';
import { parseTiming } from './timestamps.ts';

// The file signature: "WEBVTT" then a space, a tab, a line break or the end.
const SIGNATURE = /^WEBVTT(?:[ \t\n]|$)/;
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
 * Reads WebVTT as the standard's parser does (https://www.w3.org/TR/webvtt1/#webvtt-parser-algorithm):
 * NUL becomes U+FFFD and CR or CRLF a line feed; a block ends at an empty line or at a line holding
 * "-->" after its first two; a block is a cue when its first line, or its second after an identifier,
 * is a timing line that parseTiming reads, and nothing otherwise (the header with Kind:, Language:
 * and YouTube's old "Style: … ##", NOTE, STYLE and REGION blocks, a cue with unreadable timings).
 * Cue settings are ignored.
 *
 * One leniency: the standard drops a file without the "WEBVTT" signature, but a caller that knows
 * the file is WebVTT (detectFormat, from a .vtt name) gets it read from its first line, as hand-made
 * files and some converters leave the signature out.
 *
 * It walks the text by index instead of splitting it into lines, and a cue's text is one slice of
 * the input: auto-caption files run to megabytes, and this halves the garbage.
 */
export function parseVtt(input: string): Cue[] {
  let text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  if (text.includes('\0')) text = text.replaceAll('\0', '\ufffd');
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
  if (SIGNATURE.test(text)) skipBlock(end + 1); // the signature line and the header block

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
      if (next < length && hasArrow(next, nextEnd)) {
        timingLine = text.slice(next, nextEnd); // the line before was the cue identifier
        end = nextEnd;
      } else {
        skipBlock(next); // NOTE, STYLE, REGION or anything else that is no cue
        continue;
      }
    }
    const payload = end + 1;
    skipBlock(payload);
    const timing = parseTiming(timingLine, 'vtt');
    if (timing)
      cues.push({
        startMs: timing.startMs,
        endMs: timing.endMs,
        text: cueText(payload < start ? text.slice(payload, start - 1) : '', voice),
      });
  }
  return cues;
}
