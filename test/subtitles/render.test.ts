import { describe, expect, it } from 'vitest';
import type { Cue } from '../../core/subtitles/cue.ts';
import { render } from '../../core/subtitles/render.ts';
import { escapeSrtText } from '../../core/subtitles/renderSrt.ts';

const cues: Cue[] = [
  { startMs: 80, endMs: 1309, text: 'Tom & Jerry <3 a-->b' },
  { startMs: 3_600_000 + 61_001, endMs: 360_000_000 + 5, text: 'MIRA: Hi.', speakerChange: true },
];

describe('render', () => {
  it('writes SRT with 1-based indexes and comma milliseconds', () => {
    expect(render(cues, 'srt')).toBe(
      '1\n00:00:00,080 --> 00:00:01,309\nTom & Jerry &lt;3 a--&gt;b\n\n2\n01:01:01,001 --> 100:00:00,005\n>> MIRA: Hi.\n',
    );
  });

  it('writes WebVTT with the header, dot milliseconds and & < > escaped', () => {
    expect(render(cues, 'vtt')).toBe(
      'WEBVTT\n\n00:00:00.080 --> 00:00:01.309\nTom &amp; Jerry &lt;3 a--&gt;b\n\n01:01:01.001 --> 100:00:00.005\n&gt;&gt; MIRA: Hi.\n',
    );
  });

  it('writes plain text one line per cue, ">> " before a new speaker', () => {
    expect(render(cues, 'txt')).toBe('Tom & Jerry <3 a-->b\n>> MIRA: Hi.\n');
  });

  it('writes nothing but the WebVTT header for no cues', () => {
    expect(render([], 'vtt')).toBe('WEBVTT\n');
    expect(render([], 'srt')).toBe('');
    expect(render([], 'txt')).toBe('');
  });

  it('escapes in SRT only what would read as markup', () => {
    expect(escapeSrtText('AT&T & co; &amp; &#39; <i>x</i> <3 a < b -->')).toBe(
      'AT&T & co; &amp;amp; &amp;#39; &lt;i>x&lt;/i> &lt;3 a < b --&gt;',
    );
  });
});
