// [hours:]minutes:seconds[.,]fraction on both sides of the arrow; hours may have any number of
// digits, the fraction 1-9 (SRT writes a comma, WebVTT a dot, and sloppy files mix them).
const TIMING = /^\s*(?:(\d+):)?(\d{1,2}):(\d{1,2})[.,](\d{1,9})[ \t]*-->[ \t]*(?:(\d+):)?(\d{1,2}):(\d{1,2})[.,](\d{1,9})(?![\d:.,])/;

function fraction(digits: string): number {
  // "5" is half a second, "1234" is 123 ms: only the first three digits count.
  return Number(digits.length >= 3 ? digits.slice(0, 3) : digits.padEnd(3, '0'));
}

function toMs(hours: string | undefined, minutes: string, seconds: string, part: string): number {
  return ((Number(hours ?? 0) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + fraction(part);
}

const digit = (line: string, at: number) => {
  const value = line.charCodeAt(at) - 48;
  return value >= 0 && value <= 9 ? value : NaN;
};

/** HH:MM:SS.mmm (or ,mmm) at `at`, read without a regex; NaN when it is not exactly that. */
function fixedTimestamp(line: string, at: number): number {
  const separator = line.charCodeAt(at + 8);
  if (line.charCodeAt(at + 2) !== 58 || line.charCodeAt(at + 5) !== 58 || (separator !== 46 && separator !== 44)) return NaN;
  const hours = digit(line, at) * 10 + digit(line, at + 1);
  const minutes = digit(line, at + 3) * 10 + digit(line, at + 4);
  const seconds = digit(line, at + 6) * 10 + digit(line, at + 7);
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + digit(line, at + 9) * 100 + digit(line, at + 10) * 10 + digit(line, at + 11);
}

/** The start and end of a "00:00:01.000 --> 00:00:02.500 …" line, or undefined if it is none. */
export function parseTiming(line: string): { startMs: number; endMs: number } | undefined {
  // The form nearly every file uses is read by hand: the regex costs a tenth of parsing a file.
  if (line.length >= 29 && line.startsWith(' --> ', 12)) {
    const startMs = fixedTimestamp(line, 0);
    const endMs = fixedTimestamp(line, 17);
    const after = line.charCodeAt(29);
    if (startMs >= 0 && endMs >= 0 && (line.length === 29 || after === 32 || after === 9)) return { startMs, endMs };
  }
  const m = TIMING.exec(line);
  if (!m) return undefined;
  return { startMs: toMs(m[1], m[2]!, m[3]!, m[4]!), endMs: toMs(m[5], m[6]!, m[7]!, m[8]!) };
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
