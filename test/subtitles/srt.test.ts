import { describe, expect, it } from 'vitest';
import { parse } from '../../core/subtitles/parse.ts';
import { parseSrt } from '../../core/subtitles/parseSrt.ts';

// What yt-dlp --convert-subs srt makes of auto captions: an empty first cue, lines repeated.
const converted = `1
00:00:00,000 --> 00:00:05,269



2
00:00:05,269 --> 00:00:05,279
okay welcome to this session this is

3
00:00:05,279 --> 00:00:07,760
okay welcome to this session this is
called the kinetic bunny need to meet

4
00:00:07,760 --> 00:00:07,770
called the kinetic bunny need to meet

5
00:00:07,770 --> 00:00:11,450
called the kinetic bunny need to meet
the virtual bonnie emilio stop this is
`;

describe('parseSrt', () => {
  it('reads cues as written, the empty one included', () => {
    const cues = parseSrt(converted);
    expect(cues).toHaveLength(5);
    expect(cues[0]).toEqual({ startMs: 0, endMs: 5269, text: '' });
    expect(cues[2]).toEqual({
      startMs: 5279,
      endMs: 7760,
      text: 'okay welcome to this session this is\ncalled the kinetic bunny need to meet',
    });
  });

  it('normalises converted auto captions: empty cue dropped, every line once', () => {
    expect(parse(converted).map((cue) => cue.text)).toEqual([
      'okay welcome to this session this is',
      'called the kinetic bunny need to meet',
      'the virtual bonnie emilio stop this is',
    ]);
  });

  it('accepts dot milliseconds, long hours and SRT coordinates', () => {
    const text = '1\n00:00:01.500 --> 00:00:02,250 X1:10 X2:20 Y1:1 Y2:2\nA\n\n2\n123:04:05,006 --> 123:04:06,007\nB\n';
    expect(parseSrt(text)).toEqual([
      { startMs: 1500, endMs: 2250, text: 'A' },
      { startMs: ((123 * 60 + 4) * 60 + 5) * 1000 + 6, endMs: ((123 * 60 + 4) * 60 + 6) * 1000 + 7, text: 'B' },
    ]);
  });

  it('drops formatting tags and decodes entities', () => {
    const text = '1\n00:00:01,000 --> 00:00:02,000\n<i>Tom</i> & <font color="#ffff00">Jerry</font> &amp;&#39; &lt;b&gt; a < b\n';
    expect(parseSrt(text)[0]!.text).toBe("Tom & Jerry &' <b> a < b");
  });

  it('reads CRLF, a BOM, blank lines holding spaces and cues without blank lines between them', () => {
    const text =
      '\ufeff1\r\n00:00:01,000 --> 00:00:02,000\r\none\r\n  \r\n2\r\n00:00:02,000 --> 00:00:03,000\r\ntwo\r\n3\r\n00:00:03,000 --> 00:00:04,000\r\nthree';
    expect(parseSrt(text).map((cue) => cue.text)).toEqual(['one', 'two', 'three']);
  });

  it('marks speaker changes and keeps sound descriptions', () => {
    const text = '1\n00:00:01,000 --> 00:00:03,000\n[APPLAUSE]\n\n2\n00:00:03,000 --> 00:00:05,000\n>> MIRA: Hi.\n>> MARK: Hello.\n';
    expect(parse(text)).toEqual([
      { startMs: 1000, endMs: 3000, text: '[APPLAUSE]' },
      { startMs: 3000, endMs: 5000, text: 'MIRA: Hi.', speakerChange: true },
      { startMs: 3000, endMs: 5000, text: 'MARK: Hello.', speakerChange: true },
    ]);
  });
});
