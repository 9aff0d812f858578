import { describe, expect, it } from 'vitest';
import { parse } from '../../core/subtitles/parse.ts';
import { renderSrt } from '../../core/subtitles/renderSrt.ts';
import { renderVtt } from '../../core/subtitles/renderVtt.ts';

// Older YouTube auto captions (as youtube-dl saved them around 2016-2018): the "Style: … ##"
// header, words timed with colour classes (<c.colorE5E5E5> for uncertain words), a line held
// on screen in a cue of its own right after the cue that timed its words, and cues whose text runs
// straight into the next timing line with no blank line between. None of the real fixtures holds
// this shape (subs.ru.vtt of youtube-captions-dataset-parser has the colour classes but never
// holds a line twice), so it is written out here.
const OLD_AUTO_CAPTIONS = `WEBVTT
Kind: captions
Language: en
Style:
::cue(c.colorCCCCCC) { color: rgb(204,204,204);
 }
::cue(c.colorE5E5E5) { color: rgb(229,229,229);
 }
##

00:00:00.030 --> 00:00:02.460 align:start position:0%
so<c.colorE5E5E5><00:00:00.539><c> I</c><00:00:00.870><c> was</c></c><c.colorCCCCCC><00:00:01.199><c> thinking</c></c>
00:00:02.460 --> 00:00:03.060 align:start position:0%
so<c.colorE5E5E5> I was</c><c.colorCCCCCC> thinking</c>

00:00:03.060 --> 00:00:05.910 align:start position:0%
about<00:00:03.389><c> it</c><c.colorE5E5E5><00:00:04.020><c> today</c></c>

00:00:05.910 --> 00:00:07.440 align:start position:0%
<c.colorE5E5E5>about it today</c>
00:00:07.440 --> 00:00:07.450 align:start position:0%
<c.colorE5E5E5>about it today</c>

00:00:09.300 --> 00:00:11.820 align:start position:0%
<c.colorCCCCCC>and</c><00:00:09.720><c> it</c><c.colorE5E5E5><00:00:10.080><c> works</c></c>
00:00:11.820 --> 00:00:13.000 align:start position:0%
and it works

00:00:14.000 --> 00:00:15.500 align:start position:0%
and it works
`;

describe('older auto captions (colour classes, held lines, run-on cues)', () => {
  it('merges a line held in a cue of its own into the cue that said it: the first start, the last end', () => {
    expect(parse(OLD_AUTO_CAPTIONS, 'video.en.vtt')).toEqual([
      { startMs: 30, endMs: 3060, text: 'so I was thinking' },
      // Held until 7.44 s; the 10 ms transition cue after it is a roll-up echo, dropped as always.
      { startMs: 3060, endMs: 7440, text: 'about it today' },
      { startMs: 9300, endMs: 13000, text: 'and it works' },
      // Said again after a pause: a cue of its own.
      { startMs: 14000, endMs: 15500, text: 'and it works' },
    ]);
  });

  it('converts to SRT and WebVTT and back without a change', () => {
    const cues = parse(OLD_AUTO_CAPTIONS, 'vtt');
    expect(parse(renderSrt(cues), 'srt')).toEqual(cues);
    expect(parse(renderVtt(cues), 'vtt')).toEqual(cues);
  });
});
