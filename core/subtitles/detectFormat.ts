import { inputFormats, type InputFormat } from './cue.ts';

const ARROW_LINE = /^[ \t]*(?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,9}[ \t]*-->/m;
const SRT_START = /^\d+[ \t]*\r?\n[ \t]*(?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,9}[ \t]*-->/;

/** A format name, file name or extension ("vtt", ".srt", "talk.en.srv3", "webvtt") to a format. */
export function formatFromHint(hint: string | undefined): InputFormat | undefined {
  if (!hint) return undefined;
  const name = hint.toLowerCase().slice(hint.lastIndexOf('.') + 1);
  if (name === 'webvtt') return 'vtt';
  return inputFormats.find((format) => format === name);
}

/**
 * Which codec reads this text, judged by content; the hint (a format or file name) only decides
 * between SRT and WebVTT for a file of timing lines without either's signature, and names the
 * format of an empty file. Undefined when the text is in no format the codecs read.
 */
export function detectFormat(text: string, hint?: string): InputFormat | undefined {
  const head = text.slice(0, 8192).replace(/^\s+/, '');
  if (!head) return formatFromHint(hint); // an empty file is an empty file of what it says it is
  if (/^WEBVTT(?:[ \t\r\n]|$)/.test(head)) return 'vtt';
  if (head.startsWith('{')) return /"events"\s*:\s*\[/.test(text) ? 'json3' : undefined;
  if (head.startsWith('<')) {
    if (/<timedtext\b[^>]*\bformat\s*=\s*["']3["']/.test(head) || /<p\s[^>]*\bt\s*=/.test(head)) return 'srv3';
    if (/<transcript[\s>]/.test(head)) return 'srv1';
    if (/<timedtext[\s>]/.test(head)) return 'srv2';
    return undefined;
  }
  if (SRT_START.test(head)) return 'srt';
  if (ARROW_LINE.test(head)) return formatFromHint(hint) === 'vtt' ? 'vtt' : 'srt';
  return undefined;
}
