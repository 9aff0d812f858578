import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { detectFormat, formatFromHint } from '../../core/subtitles/detectFormat.ts';
import { parse } from '../../core/subtitles/parse.ts';

describe('detectFormat', () => {
  it('knows each format by its content', () => {
    expect(detectFormat('\ufeffWEBVTT\r\n\r\n')).toBe('vtt');
    expect(detectFormat('WEBVTT - title\n')).toBe('vtt');
    expect(detectFormat('\n1\r\n00:00:01,000 --> 00:00:02,000\r\nx')).toBe('srt');
    expect(detectFormat('{"wireMagic":"pb3","events":[]}')).toBe('json3');
    expect(detectFormat('<?xml version="1.0"?><transcript><text start="1" dur="2">x</text></transcript>')).toBe('srv1');
    expect(detectFormat('<?xml version="1.0"?><timedtext><text t="1" d="2">x</text></timedtext>')).toBe('srv2');
    expect(detectFormat('<?xml version="1.0"?><timedtext format="3"><body></body></timedtext>')).toBe('srv3');
  });

  it('lets content win over the hint, and the hint settle headerless timing files', () => {
    expect(detectFormat('WEBVTT\n', 'talk.srt')).toBe('vtt');
    const headerless = '00:00:01.000 --> 00:00:02.000\nx\n';
    expect(detectFormat(headerless)).toBe('srt');
    expect(detectFormat(headerless, 'talk.en.vtt')).toBe('vtt');
  });

  it('recognises no format in other text', () => {
    expect(detectFormat('')).toBeUndefined();
    expect(detectFormat('hello world')).toBeUndefined();
    expect(detectFormat('{"items":[]}')).toBeUndefined();
    expect(detectFormat('<html><body>no</body></html>')).toBeUndefined();
    expect(() => parse('hello world', 'x.vtt')).toThrow(AppError);
  });

  it('reads format names and file names as hints', () => {
    expect(formatFromHint('VTT')).toBe('vtt');
    expect(formatFromHint('webvtt')).toBe('vtt');
    expect(formatFromHint('/a/b.en.srv3')).toBe('srv3');
    expect(formatFromHint('notes.txt')).toBeUndefined();
    expect(formatFromHint(undefined)).toBeUndefined();
  });
});
