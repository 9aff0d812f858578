import { describe, expect, it } from 'vitest';
import { parse } from '../../core/subtitles/parse.ts';
import { parseVtt } from '../../core/subtitles/parseVtt.ts';

// The shape of a YouTube auto-caption track: each cue repeats the line before, word timings in
// <c> tags, and 10 ms transition cues in between.
const autoCaptions = `WEBVTT
Kind: captions
Language: en

00:00:00.080 --> 00:00:01.309 align:start position:0%
 
when<00:00:00.199><c> I</c><00:00:00.280><c> started</c><00:00:00.560><c> working</c>

00:00:01.309 --> 00:00:01.319 align:start position:0%
when I started working
 

00:00:01.319 --> 00:00:03.389 align:start position:0%
when I started working
on<00:00:01.680><c> embedded</c><00:00:01.880><c> systems</c>

00:00:03.389 --> 00:00:03.399 align:start position:0%
on embedded systems
 

00:00:03.399 --> 00:00:05.030 align:start position:0%
on embedded systems
&gt;&gt; yes<00:00:03.800><c> &amp;</c><00:00:04.040><c> no</c>
`;

describe('parseVtt', () => {
  it('reads YouTube auto captions: tags, inline timestamps and settings go, lines stay', () => {
    const cues = parseVtt(autoCaptions);
    expect(cues).toHaveLength(5);
    expect(cues[0]).toEqual({ startMs: 80, endMs: 1309, text: ' \nwhen I started working' });
    expect(cues[1]).toEqual({ startMs: 1309, endMs: 1319, text: 'when I started working\n ' });
    expect(cues[4]!.text).toBe('on embedded systems\n>> yes & no');
  });

  it('normalises the roll-up into each word once, in order', () => {
    expect(parse(autoCaptions)).toEqual([
      { startMs: 80, endMs: 1309, text: 'when I started working' },
      { startMs: 1319, endMs: 3389, text: 'on embedded systems' },
      { startMs: 3399, endMs: 5030, text: 'yes & no', speakerChange: true },
    ]);
  });

  it('skips STYLE, NOTE and REGION blocks, header lines and cue identifiers', () => {
    const text = `WEBVTT - a title
Kind: captions
Language: de

STYLE
::cue { color: yellow }

REGION
id:fred width:40%

NOTE this is a comment
that goes on

intro
00:01.000 --> 00:02.500 region:fred line:0
Hallo

2
00:00:03.000 --> 00:00:04.000
Welt
`;
    expect(parseVtt(text)).toEqual([
      { startMs: 1000, endMs: 2500, text: 'Hallo' },
      { startMs: 3000, endMs: 4000, text: 'Welt' },
    ]);
  });

  it('decodes entities and drops <i>, <b>, <u>, <c.class> and <ruby> markup', () => {
    const text =
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n<i>it&#39;s</i> <b>R&amp;D</b>&nbsp;<u>&lt;3</u> <c.colorE5E5E5>&quot;x&quot;</c> <ruby>漢<rt>kan</rt></ruby> &bogus; a < b\n';
    expect(parseVtt(text)[0]!.text).toBe('it\'s R&D\u00a0<3 "x" 漢kan &bogus; a < b');
  });

  it('turns a voice tag naming a new speaker into a speaker change with the name', () => {
    const text = `WEBVTT

00:00:00.000 --> 00:00:01.000
<v Roger Bingham>We are in New York City

00:00:01.000 --> 00:00:02.000
<v Roger Bingham>still Roger

00:00:02.000 --> 00:00:03.000
<v.loud Neil deGrasse Tyson>Hi</v> and more
`;
    expect(parse(text)).toEqual([
      { startMs: 0, endMs: 1000, text: 'Roger Bingham: We are in New York City', speakerChange: true },
      { startMs: 1000, endMs: 2000, text: 'still Roger' },
      { startMs: 2000, endMs: 3000, text: 'Neil deGrasse Tyson: Hi and more', speakerChange: true },
    ]);
  });

  it('reads CRLF and CR line endings and a BOM', () => {
    const lf = 'WEBVTT\nKind: captions\n\n00:00:01.000 --> 00:00:02.000\nline one\nline two\n\n00:00:03.000 --> 00:00:04.000\nthree\n';
    const expected = parseVtt(lf);
    expect(expected).toHaveLength(2);
    expect(parseVtt(`\ufeff${lf.replaceAll('\n', '\r\n')}`)).toEqual(expected);
    expect(parseVtt(lf.replaceAll('\n', '\r'))).toEqual(expected);
  });

  it('starts a new cue at a timing line even without a blank line before it', () => {
    const text = 'WEBVTT\n00:00:01.000 --> 00:00:02.000\none\n00:00:02.000 --> 00:00:03.000\ntwo\n';
    expect(parseVtt(text).map((cue) => cue.text)).toEqual(['one', 'two']);
  });

  it("reads YouTube's 2018 header with a Style: section", () => {
    const text =
      'WEBVTT\nKind: captions\nLanguage: ru\nStyle:\n::cue(c.colorCCCCCC) { color: rgb(204,204,204);\n }\n##\n\n00:00:11.179 --> 00:00:13.920 align:start position:19%\nчтобы<00:00:12.179><c> приготовить</c>\n';
    expect(parseVtt(text)).toEqual([{ startMs: 11179, endMs: 13920, text: 'чтобы приготовить' }]);
  });

  it('keeps an empty cue and skips cues with unreadable timings', () => {
    const text = 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n\nxx:00 --> 00:00:03.000\nlost\n\n00:00:04.000 --> 00:00:05.000\nkept\n';
    expect(parseVtt(text)).toEqual([
      { startMs: 1000, endMs: 2000, text: '' },
      { startMs: 4000, endMs: 5000, text: 'kept' },
    ]);
  });

  it('reads a block whose second line is a timing line as a cue, whatever its first line says, as the standard does', () => {
    const text = 'WEBVTT\n\nNOTE\n00:00:01.000 --> 00:00:02.000\nshown by browsers\n\nSTYLE\n::cue { color: red }\n';
    expect(parseVtt(text)).toEqual([{ startMs: 1000, endMs: 2000, text: 'shown by browsers' }]);
  });

  it('reads a file without the WEBVTT signature from its first line (the one leniency the standard lacks)', () => {
    expect(parse('00:01.000 --> 00:02.000\nno header\n', 'talk.en.vtt')).toEqual([{ startMs: 1000, endMs: 2000, text: 'no header' }]);
  });
});
