import { invalidInput } from '../errors.ts';
import type { Cue, InputFormat } from './cue.ts';
import { detectFormat } from './detectFormat.ts';
import { normaliseCues } from './normaliseCues.ts';
import { parseJson3 } from './parseJson3.ts';
import { parseSrt } from './parseSrt.ts';
import { parseTimedtext } from './parseTimedtext.ts';
import { parseVtt } from './parseVtt.ts';

/** The cues exactly as one codec reads them: markup and entities undone, nothing else. */
export function parseRaw(text: string, format: InputFormat): Cue[] {
  switch (format) {
    case 'vtt':
      return parseVtt(text);
    case 'srt':
      return parseSrt(text);
    case 'json3':
      return parseJson3(text);
    case 'srv1':
    case 'srv2':
    case 'srv3':
      return parseTimedtext(text);
  }
}

/**
 * Any supported subtitle text to normalised cues; the codec is chosen from the content (see
 * detectFormat for what the hint decides). Throws INVALID_INPUT for text in no known format.
 */
export function parse(text: string, hint?: string): Cue[] {
  const format = detectFormat(text, hint);
  if (!format) throw invalidInput('not a subtitle format that can be read (WebVTT, SRT, YouTube timedtext srv1/srv2/srv3 XML or json3)');
  return normaliseCues(parseRaw(text, format));
}
