const TAB = 9;
const FORM_FEED = 12;
const SPACE = 32;
const COMMA = 44;
const HYPHEN = 45;
const FULL_STOP = 46;
const COLON = 58;
const GREATER_THAN = 62;

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * The standard's "skip whitespace" inside a line: ASCII whitespace is space, tab, form feed, LF and
 * CR, and a line holds no LF or CR. A vertical tab is not whitespace.
 */
function skipWhitespace(line: string, at: number): number {
  let code = line.charCodeAt(at);
  while (code === SPACE || code === TAB || code === FORM_FEED) code = line.charCodeAt(++at);
  return at;
}

// Where the digits readDigits read ended, and where the last timestamp collectTimestamp read ended:
// kept here rather than returned as pairs, as these run twice per cue of files that run to megabytes.
let digitsEnd = 0;
let timestampEnd = 0;

/** The value of the ASCII digits starting at `at` (0 when there are none); digitsEnd is where they end. */
function readDigits(line: string, at: number): number {
  let value = 0;
  let code = line.charCodeAt(at);
  while (isDigit(code)) {
    value = value * 10 + code - 48;
    code = line.charCodeAt(++at);
  }
  digitsEnd = at;
  return value;
}

/**
 * WebVTT's "collect a WebVTT timestamp" (https://www.w3.org/TR/webvtt1/#collect-a-webvtt-timestamp),
 * step for step, from `at`: [hours:]minutes:seconds.fff, where minutes and seconds are exactly two
 * digits up to 59 and the fraction exactly three digits; the first field is hours when it is not two
 * digits or is above 59 (so "60:00:00.000" is 60 hours, "00:60.000" nothing), and then a third field
 * must follow. Anything else (a digit too many or too few, a letter inside) is no timestamp: guessing
 * what "00:00.0000" or "01.0x00" meant would give wrong times. NaN when there is none; else the time
 * in milliseconds, and timestampEnd is where it ended.
 */
function collectTimestamp(line: string, at: number, format: 'vtt' | 'srt'): number {
  if (!isDigit(line.charCodeAt(at))) return NaN;
  const value1 = readDigits(line, at);
  const firstIsHours = digitsEnd - at !== 2 || value1 > 59;
  if (line.charCodeAt(digitsEnd) !== COLON) return NaN;
  at = digitsEnd + 1;
  let minutes = readDigits(line, at);
  if (digitsEnd - at !== 2) return NaN;
  let hours = 0;
  let seconds: number;
  if (firstIsHours || line.charCodeAt(digitsEnd) === COLON) {
    if (line.charCodeAt(digitsEnd) !== COLON) return NaN;
    at = digitsEnd + 1;
    seconds = readDigits(line, at);
    if (digitsEnd - at !== 2) return NaN;
    hours = value1;
  } else {
    seconds = minutes;
    minutes = value1;
  }
  const separator = line.charCodeAt(digitsEnd);
  if (separator !== FULL_STOP && (format === 'vtt' || separator !== COMMA)) return NaN;
  at = digitsEnd + 1;
  const milliseconds = readDigits(line, at);
  if (digitsEnd - at !== 3 || minutes > 59 || seconds > 59) return NaN;
  timestampEnd = digitsEnd;
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds;
}

const digitAt = (line: string, at: number) => (isDigit(line.charCodeAt(at)) ? line.charCodeAt(at) - 48 : Number.NaN);

/** HH:MM:SS.fff at `at`, exactly so, with minutes and seconds up to 59; NaN otherwise. */
function fixedTimestamp(line: string, at: number, format: 'vtt' | 'srt'): number {
  const separator = line.charCodeAt(at + 8);
  if (line.charCodeAt(at + 2) !== COLON || line.charCodeAt(at + 5) !== COLON) return Number.NaN;
  if (separator !== FULL_STOP && (format === 'vtt' || separator !== COMMA)) return Number.NaN;
  const hours = digitAt(line, at) * 10 + digitAt(line, at + 1);
  const minutes = digitAt(line, at + 3) * 10 + digitAt(line, at + 4);
  const seconds = digitAt(line, at + 6) * 10 + digitAt(line, at + 7);
  const milliseconds = digitAt(line, at + 9) * 100 + digitAt(line, at + 10) * 10 + digitAt(line, at + 11);
  return minutes > 59 || seconds > 59 ? Number.NaN : ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds;
}

/**
 * The start and end of a timing line, read as WebVTT's "collect WebVTT cue timings and settings"
 * (https://www.w3.org/TR/webvtt1/#collect-webvtt-cue-timings-and-settings) reads them: whitespace,
 * a timestamp, whitespace, "-->", whitespace, a timestamp; what follows (WebVTT cue settings, SRT's
 * X1:… coordinates) is ignored. Undefined when the line is no timing line.
 *
 * SRT has no standard: SubRip writes the same timestamps with a comma before the milliseconds, and
 * some converters write WebVTT's dot instead. Leniency kept for SRT only (`format` 'srt'): either
 * separator, as both read as the same time; a comma in WebVTT is no timestamp, as the standard says.
 */
export function parseTiming(line: string, format: 'vtt' | 'srt'): { startMs: number; endMs: number } | undefined {
  // The form nearly every file writes, "00:00:01.000 --> 00:00:02.500", read by offsets: what the steps
  // below read from it, at a fraction of their cost (they took an eighth of parsing a file). Anything
  // else, or a field out of range, is left to them.
  if (line.length >= 29 && line.startsWith(' --> ', 12) && !isDigit(line.charCodeAt(29))) {
    const startMs = fixedTimestamp(line, 0, format);
    const endMs = fixedTimestamp(line, 17, format);
    if (startMs >= 0 && endMs >= 0) return { startMs, endMs };
  }
  const startMs = collectTimestamp(line, skipWhitespace(line, 0), format);
  if (Number.isNaN(startMs)) return undefined;
  const at = skipWhitespace(line, timestampEnd);
  if (line.charCodeAt(at) !== HYPHEN || line.charCodeAt(at + 1) !== HYPHEN || line.charCodeAt(at + 2) !== GREATER_THAN) return undefined;
  const endMs = collectTimestamp(line, skipWhitespace(line, at + 3), format);
  return Number.isNaN(endMs) ? undefined : { startMs, endMs };
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (WebVTT); hours grow past two digits when they must. */
export function formatTimestamp(ms: number, separator: ',' | '.'): string {
  const whole = Math.max(0, Math.round(ms));
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = Math.floor(whole / 1000) % 60;
  return `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}${separator}${pad(whole % 1000, 3)}`;
}
