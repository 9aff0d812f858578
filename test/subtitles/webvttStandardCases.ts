/**
 * The WebVTT standard's own file-parsing cases: web-platform-tests `webvtt/parsing/file-parsing/`
 * (https://github.com/web-platform-tests/wpt/tree/master/webvtt/parsing/file-parsing/tests, 3-Clause
 * BSD), each `support/<name>.vtt` byte for byte (NUL, CR, form feed and vertical tab written as
 * escapes) with what its `<name>.html` asserts about the cues: how many, their text, their times
 * (WPT's seconds as milliseconds). Taken from the copy in w3c/webvtt.js (`test/wpt-file-parsing/`,
 * commit 986949ecadd60411ae889c4520d4d2a9847d9fb7), which pairs each file with its assertions.
 * Assertions on what this project does not read (cue identifiers, settings, regions, style sheets)
 * are left out; the settings and regions files still say how many cues a file holds.
 */
export const webvttFileParsingCases: Array<{
  name: string;
  input: string;
  cues: number;
  texts?: string[];
  times?: Array<[number, number]>;
}> = [
  {
    name: 'arrows',
    input:
      'WEBVTT\n\n-->\n00:00:00.000 --> 00:00:01.000\ntext0\nfoo-->\n00:00:00.000 --> 00:00:01.000\ntext1\n-->foo\n00:00:00.000 --> 00:00:01.000\ntext2\n--->\n00:00:00.000 --> 00:00:01.000\ntext3\n-->-->\n00:00:00.000 --> 00:00:01.000\ntext4\n00:00:00.000 --> 00:00:01.000\ntext5\n\n00:00:00.000 -a -->\n\n00:00:00.000 --a -->\n\n00:00:00.000 - -->\n\n00:00:00.000 -- -->\n',
    cues: 6,
    texts: ['text0', 'text1', 'text2', 'text3', 'text4', 'text5'],
  },
  { name: 'header-garbage', input: 'WEBVTT\nfoobar\n\n00:00:00.000 --> 00:00:01.000\ntext', cues: 1, texts: ['text'], times: [[0, 1000]] },
  { name: 'header-space', input: 'WEBVTT\n \n00:00:00.000 --> 00:00:01.000\ntext', cues: 1, texts: ['text'], times: [[0, 1000]] },
  { name: 'header-tab', input: 'WEBVTT\n\t\n00:00:00.000 --> 00:00:01.000\ntext\n', cues: 1, texts: ['text'], times: [[0, 1000]] },
  { name: 'header-timings', input: 'WEBVTT\n00:00:00.000 --> 00:00:01.000\ntext', cues: 1, texts: ['text'], times: [[0, 1000]] },
  {
    name: 'ids',
    input:
      'WEBVTT\n\n leading space\n00:00:00.000 --> 00:00:01.000\ntext0\n\ntrailing space \n00:00:00.000 --> 00:00:01.000\ntext1\n\n-- >\n00:00:00.000 --> 00:00:01.000\ntext2\n\n->\n00:00:00.000 --> 00:00:01.000\ntext3\n\n \n00:00:00.000 --> 00:00:01.000\ntext4\n',
    cues: 5,
  },
  {
    name: 'newlines',
    input:
      'WEBVTT\r\rcr\r00:00:00.000 --> 00:00:01.000\rtext0\n\nlf\n00:00:00.000 --> 00:00:01.000\ntext1\r\n\r\ncrlf\r\n00:00:00.000 --> 00:00:01.000\r\ntext2\n\rlfcr\r00:00:00.000 --> 00:00:01.000\ntext3\n\r\n',
    cues: 4,
    texts: ['text0', 'text1', 'text2', 'text3'],
  },
  {
    name: 'nulls',
    input:
      'WEBVTT\n\u0000\n(null in previous line should make this line also part of the header)\n00:00:00.000 --> 00:00:01.000\ntext0\n\n\u0000 (null in id)\n00:00:00.000 --> 00:00:01.000\ntext1\n\n\ufffd (null in cue data)\n00:00:00.000 --> 00:00:01.000\n\ufffdtext\u00002\n\n00:00:00.000 --> 00:00:01.000 align\u0000:end\ntext3\n\n00:00:00.000 --> 00:00:01.000 align:end\u0000\ntext4\n\n00:00:00.000 --> 00:00:01.000\u0000align:end\ntext5\n\n00:00:00.000 --> 00:00:01.000\u0000 align:end\ntext6\n\n00:00:00.000\u0000 --> 00:00:01.000\ninvalid\n\n00:00:00.000 -->\u000000:00:01.000\ninvalid\n\n\u000000:00:00.000 --> 00:00:01.000\ninvalid\n\n0\u00000:00:00.000 --> 00:00:01.000\ninvalid\n\n00\u0000:00:00.000 --> 00:00:01.000\ninvalid\n\n00:\u000000:00.000 --> 00:00:01.000\ninvalid\n\n00:0\u00000:00.000 --> 00:00:01.000\ninvalid\n\n00:00\u0000:00.000 --> 00:00:01.000\ninvalid\n\n00:00:\u000000.000 --> 00:00:01.000\ninvalid\n\n00:00:0\u00000.000 --> 00:00:01.000\ninvalid\n\n00:00:00\u0000.000 --> 00:00:01.000\ninvalid\n\n00:00:00.\u0000000 --> 00:00:01.000\ninvalid\n\n00:00:00.0\u000000 --> 00:00:01.000\ninvalid\n\n00:00:00.00\u00000 --> 00:00:01.000\ninvalid\n\n00:00:00.000\u0000 --> 00:00:01.000\ninvalid\n\n00:00:00.000 \u0000--> 00:00:01.000\ninvalid\n\n00:00:00.000 -\u0000-> 00:00:01.000\ninvalid\n\n00:00:00.000 --\u0000> 00:00:01.000\ninvalid\n\n00:00:00.000 -->\u0000 00:00:01.000\ninvalid\n\n00:00:00.000 --> \u000000:00:01.000\ninvalid\n\n00:00:00.000 --> 0\u00000:00:01.000\ninvalid\n\n00:00:00.000 --> 00\u0000:00:01.000\ninvalid\n\n00:00:00.000 --> 00:\u000000:01.000\ninvalid\n\n00:00:00.000 --> 00:0\u00000:01.000\ninvalid\n\n00:00:00.000 --> 00:00\u0000:01.000\ninvalid\n\n00:00:00.000 --> 00:00:\u000001.000\ninvalid\n\n00:00:00.000 --> 00:00:0\u00001.000\ninvalid\n\n00:00:00.000 --> 00:00:01\u0000.000\ninvalid\n\n00:00:00.000 --> 00:00:01.\u0000000\ninvalid\n\n00:00:00.000 --> 00:00:01.0\u000000\ninvalid\n\n00:00:00.000 --> 00:00:01.00\u00000\ninvalid\n\n\u00000:00:00.000 --> 00:00:01.000\ninvalid\n\n0\u0000:00:00.000 --> 00:00:01.000\ninvalid\n\n00\u000000:00.000 --> 00:00:01.000\ninvalid\n\n00:\u00000:00.000 --> 00:00:01.000\ninvalid\n\n00:0\u0000:00.000 --> 00:00:01.000\ninvalid\n\n00:00\u000000.000 --> 00:00:01.000\ninvalid\n\n00:00:\u00000.000 --> 00:00:01.000\ninvalid\n\n00:00:0\u0000.000 --> 00:00:01.000\ninvalid\n\n00:00:00\u0000000 --> 00:00:01.000\ninvalid\n\n00:00:00.\u000000 --> 00:00:01.000\ninvalid\n\n00:00:00.0\u00000 --> 00:00:01.000\ninvalid\n\n00:00:00.00\u0000 --> 00:00:01.000\ninvalid\n\n00:00:00.000\u0000--> 00:00:01.000\ninvalid\n\n00:00:00.000 \u0000-> 00:00:01.000\ninvalid\n\n00:00:00.000 -\u0000> 00:00:01.000\ninvalid\n\n00:00:00.000 --\u0000 00:00:01.000\ninvalid\n\n00:00:00.000 -->\u000000:00:01.000\ninvalid\n\n00:00:00.000 --> \u00000:00:01.000\ninvalid\n\n00:00:00.000 --> 0\u0000:00:01.000\ninvalid\n\n00:00:00.000 --> 00\u000000:01.000\ninvalid\n\n00:00:00.000 --> 00:\u00000:01.000\ninvalid\n\n00:00:00.000 --> 00:0\u0000:01.000\ninvalid\n\n00:00:00.000 --> 00:00\u000001.000\ninvalid\n\n00:00:00.000 --> 00:00:\u00001.000\ninvalid\n\n00:00:00.000 --> 00:00:0\u0000.000\ninvalid\n\n00:00:00.000 --> 00:00:01\u0000000\ninvalid\n\n00:00:00.000 --> 00:00:01.\u000000\ninvalid\n\n00:00:00.000 --> 00:00:01.0\u00000\ninvalid\n\n00:00:00.000 --> 00:00:01.00\u0000\ninvalid\n',
    cues: 7,
    texts: ['text0', 'text1', '\ufffdtext\ufffd2', 'text3', 'text4', 'text5', 'text6'],
  },
  { name: 'signature-bom', input: '\ufeffWEBVTT\n', cues: 0 },
  { name: 'signature-no-newline', input: 'WEBVTT', cues: 0 },
  { name: 'signature-space', input: 'WEBVTT \n', cues: 0 },
  { name: 'signature-space-no-newline', input: 'WEBVTT ', cues: 0 },
  { name: 'signature-tab', input: 'WEBVTT\t\n', cues: 0 },
  { name: 'signature-tab-no-newline', input: 'WEBVTT\t', cues: 0 },
  { name: 'signature-timings', input: 'WEBVTT 00:00:00.000 --> 00:00:01.000\ntext\n', cues: 0 },
  {
    name: 'timings-60',
    input:
      'WEBVTT\n\n00:00:60.000 --> 00:00:01.000\ninvalid\n\n00:60:00.000 --> 00:00:01.000\ninvalid\n\n00:00:00.000 --> 00:00:60.000\ninvalid\n\n00:00:00.000 --> 00:60:00.000\ninvalid\n\n00:00:00.000 --> 60:00:01.000\ntext1\n\n60:00:00.000 --> 60:00:01.000\ntext2\n',
    cues: 2,
    texts: ['text1', 'text2'],
    times: [
      [0, 216001000],
      [216000000, 216001000],
    ],
  },
  { name: 'timings-eof', input: 'WEBVTT\n\n00:00:00.000 -->', cues: 0 },
  {
    name: 'timings-garbage',
    input:
      'WEBVTT\n\nx00:00:00.000 --> 00:00:01.000\ninvalid\n\n0x0:00:00.000 --> 00:00:01.000\ninvalid\n\n00x:00:00.000 --> 00:00:01.000\ninvalid\n\n00:x00:00.000 --> 00:00:01.000\ninvalid\n\n00:0x0:00.000 --> 00:00:01.000\ninvalid\n\n00:00x:00.000 --> 00:00:01.000\ninvalid\n\n00:00:x00.000 --> 00:00:01.000\ninvalid\n\n00:00:0x0.000 --> 00:00:01.000\ninvalid\n\n00:00:00x.000 --> 00:00:01.000\ninvalid\n\n00:00:00.x000 --> 00:00:01.000\ninvalid\n\n00:00:00.0x00 --> 00:00:01.000\ninvalid\n\n00:00:00.00x0 --> 00:00:01.000\ninvalid\n\n00:00:00.000x --> 00:00:01.000\ninvalid\n\n00:00:00.000 x--> 00:00:01.000\ninvalid\n\n00:00:00.000 -x-> 00:00:01.000\ninvalid\n\n00:00:00.000 --x> 00:00:01.000\ninvalid\n\n00:00:00.000 -->x 00:00:01.000\ninvalid\n\n00:00:00.000 --> x00:00:01.000\ninvalid\n\n00:00:00.000 --> 0x0:00:01.000\ninvalid\n\n00:00:00.000 --> 00x:00:01.000\ninvalid\n\n00:00:00.000 --> 00:x00:01.000\ninvalid\n\n00:00:00.000 --> 00:0x0:01.000\ninvalid\n\n00:00:00.000 --> 00:00x:01.000\ninvalid\n\n00:00:00.000 --> 00:00:x01.000\ninvalid\n\n00:00:00.000 --> 00:00:0x1.000\ninvalid\n\n00:00:00.000 --> 00:00:01x.000\ninvalid\n\n00:00:00.000 --> 00:00:01.x000\ninvalid\n\n00:00:00.000 --> 00:00:01.0x00\ninvalid\n\n00:00:00.000 --> 00:00:01.00x0\ninvalid\n\nx0:00:00.000 --> 00:00:01.000\ninvalid\n\n0x:00:00.000 --> 00:00:01.000\ninvalid\n\n00x00:00.000 --> 00:00:01.000\ninvalid\n\n00:x0:00.000 --> 00:00:01.000\ninvalid\n\n00:0x:00.000 --> 00:00:01.000\ninvalid\n\n00:00x00.000 --> 00:00:01.000\ninvalid\n\n00:00:x0.000 --> 00:00:01.000\ninvalid\n\n00:00:0x.000 --> 00:00:01.000\ninvalid\n\n00:00:00x000 --> 00:00:01.000\ninvalid\n\n00:00:00.x00 --> 00:00:01.000\ninvalid\n\n00:00:00.0x0 --> 00:00:01.000\ninvalid\n\n00:00:00.00x --> 00:00:01.000\ninvalid\n\n00:00:00.000x--> 00:00:01.000\ninvalid\n\n00:00:00.000 x-> 00:00:01.000\ninvalid\n\n00:00:00.000 -x> 00:00:01.000\ninvalid\n\n00:00:00.000 --x 00:00:01.000\ninvalid\n\n00:00:00.000 -->x00:00:01.000\ninvalid\n\n00:00:00.000 --> x0:00:01.000\ninvalid\n\n00:00:00.000 --> 0x:00:01.000\ninvalid\n\n00:00:00.000 --> 00x00:01.000\ninvalid\n\n00:00:00.000 --> 00:x0:01.000\ninvalid\n\n00:00:00.000 --> 00:0x:01.000\ninvalid\n\n00:00:00.000 --> 00:00x01.000\ninvalid\n\n00:00:00.000 --> 00:00:x1.000\ninvalid\n\n00:00:00.000 --> 00:00:0x.000\ninvalid\n\n00:00:00.000 --> 00:00:01x000\ninvalid\n\n00:00:00.000 --> 00:00:01.x00\ninvalid\n\n00:00:00.000 --> 00:00:01.0x0\ninvalid\n\n00:00:00.000 --> 00:00:01.00x\ninvalid\n\n00.00:00.000 --> 00:00:01.000\ninvalid\n\n00:00.00.000 --> 00:00:01.000\ninvalid\n\n00:00:00:000 --> 00:00:01.000\ninvalid\n\n00:00.00:000 --> 00:00:01.000\ninvalid\n\n00:00:00,000 --> 00:00:01,000\ninvalid',
    cues: 0,
  },
  {
    name: 'timings-negative',
    input:
      'WEBVTT\n\n00:00:00.000 --> 00:00:00.000\ntext0\n\n00:00:01.000 --> 00:00:00.999\ntext1\n\n00:01:00.000 --> 00:00:59.999\ntext2\n\n01:00:00.000 --> 00:59:59.999\ntext3\n',
    cues: 4,
    texts: ['text0', 'text1', 'text2', 'text3'],
    times: [
      [0, 0],
      [1000, 999],
      [60000, 59999],
      [3600000, 3599999],
    ],
  },
  {
    name: 'timings-omitted-hours',
    input: 'WEBVTT\n\n00:00.000 --> 00:00:01.000\ntext0\n\n00:00:00.000 --> 00:01.000\ntext1\n\n00:00.000 --> 00:01.000\ntext2\n',
    cues: 3,
    texts: ['text0', 'text1', 'text2'],
    times: [
      [0, 1000],
      [0, 1000],
      [0, 1000],
    ],
  },
  {
    name: 'timings-too-long',
    input:
      'WEBVTT\n\n000:00:00.000 --> 00:00:01.000\ntext0\n\n00::00:00.000 --> 00:00:01.000\ninvalid\n\n00:000:00.000 --> 00:00:01.000\ninvalid\n\n00:00::00.000 --> 00:00:01.000\ninvalid\n\n00:00:000.000 --> 00:00:01.000\ninvalid\n\n00:00:00..000 --> 00:00:01.000\ninvalid\n\n00:00:00.0000 --> 00:00:01.000\ninvalid\n\n00:00.0000 --> 00:00:01.000\ninvalid\n\n000:00.000 --> 00:01.000\ninvalid\n\n00::00.000 --> 00:01.000\ninvalid\n\n00:000.000 --> 00:01.000\ninvalid\n\n00:00..000 --> 00:01.000\ninvalid\n\n00:00.0000 --> 00:01.000\ninvalid\n\n00:00.000 --> 000:01.000\ninvalid\n\n00:00:00.000 --> 000:00:01.000\ntext1\n',
    cues: 2,
    texts: ['text0', 'text1'],
    times: [
      [0, 1000],
      [0, 1000],
    ],
  },
  {
    name: 'timings-too-short',
    input:
      'WEBVTT\n\n0:00:00.000 --> 00:00:01.000\ntext0\n\n0000:00.000 --> 00:00:01.000\ninvalid\n\n00:0:00.000 --> 00:00:01.000\ninvalid\n\n00:0000.000 --> 00:00:01.000\ninvalid\n\n00:00:0.000 --> 00:00:01.000\ninvalid\n\n00:00:00000 --> 00:00:01.000\ninvalid\n\n00:00:00.00 --> 00:00:01.000\ninvalid\n\n00:00:00.0 --> 00:00:01.000\ninvalid\n\n00:00:00. --> 00:00:01.000\ninvalid\n\n00:00:00 --> 00:00:01.000\ninvalid\n\n00:00:0 --> 00:00:01.000\ninvalid\n\n00:00: --> 00:00:01.000\ninvalid\n\n00:00 --> 00:00:01.000\ninvalid\n\n00:0 --> 00:00:01.000\ninvalid\n\n00: --> 00:00:01.000\ninvalid\n\n00 --> 00:00:01.000\ninvalid\n\n0 --> 00:00:01.000\ninvalid\n\n --> 00:00:01.000\ninvalid\n\n0:00.000 --> 00:01.000\ninvalid\n\n0000.000 --> 00:01.000\ninvalid\n\n00:0.000 --> 00:01.000\ninvalid\n\n00:00000 --> 00:01.000\ninvalid\n\n00:00.00 --> 00:01.000\ninvalid\n\n00:00.0 --> 00:01.000\ninvalid\n\n00:00. --> 00:01.000\ninvalid\n\n0:00. --> 00:01.000\ninvalid\n\n:00. --> 00:01.000\ninvalid\n\n00. --> 00:01.000\ninvalid\n\n0. --> 00:01.000\ninvalid\n\n. --> 00:01.000\ninvalid\n\n00:00.000 --> 0:01.000\ninvalid\n\n00:00:00.000 --> 0:00:01.000\ntext1\n',
    cues: 2,
    texts: ['text0', 'text1'],
    times: [
      [0, 1000],
      [0, 1000],
    ],
  },
  {
    name: 'whitespace-chars',
    input:
      'WEBVTT\n\nspaces\n   00:00:00.000    -->  00:00:01.000 \n   text0\n\ntabs\n\t\t\t00:00:00.000\t\t\t\t-->\t\t00:00:01.000\t\ntext1\n\nform feed\n\f\f\f00:00:00.000\f\f\f\f-->\f\f00:00:01.000\f\ntext2\n\nvertical tab\n\u000b\u000b\u000b00:00:00.000\u000b\u000b\u000b\u000b-->\u000b\u000b00:00:01.000\u000b\ninvalid\n',
    cues: 3,
    texts: ['   text0', 'text1', 'text2'],
  },
  {
    name: 'settings-align',
    input:
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\ntext0\n\n00:00:00.000 --> 00:00:01.000 align:start\ntext1\n\n00:00:00.000 --> 00:00:01.000 align:center\ntext2\n\n00:00:00.000 --> 00:00:01.000 align:end\ntext3\n\n00:00:00.000 --> 00:00:01.000 align:left\ntext4\n\n00:00:00.000 --> 00:00:01.000 align:right\ntext5\n\n00:00:00.000 --> 00:00:01.000 align:start align:end\ntext6\n\n00:00:00.000 --> 00:00:01.000 align:end align:CENTER\ntext7\n\n00:00:00.000 --> 00:00:01.000 align:end align: center\ntext8\n\n00:00:00.000 --> 00:00:01.000 align:end align:\ntext9\n\n00:00:00.000 --> 00:00:01.000 align:end align:middle\ntext10\n\n00:00:00.000 --> 00:00:01.000 align:end align\ntext11\n\n00:00:00.000 --> 00:00:01.000 align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:end align:center\ntext12\n',
    cues: 13,
  },
  {
    name: 'settings-line',
    input:
      'WEBVTT\n\nNOTE valid\n\n00:00:00.000 --> 00:00:01.000 line:-1\nvalid0\n\n00:00:00.000 --> 00:00:01.000 line:0\nvalid1\n\n00:00:00.000 --> 00:00:01.000 line:-0\nvalid2\n\n00:00:00.000 --> 00:00:01.000 line:1\nvalid3\n\n00:00:00.000 --> 00:00:01.000 line:100\nvalid4\n\n00:00:00.000 --> 00:00:01.000 line:101\nvalid5\n\n00:00:00.000 --> 00:00:01.000 line:65536\nvalid6\n\n00:00:00.000 --> 00:00:01.000 line:4294967296\nvalid7\n\n00:00:00.000 --> 00:00:01.000 line:18446744073709552000\nvalid8\n\n00:00:00.000 --> 00:00:01.000 line:10000000000000000000000000000000000\nvalid9\n\n00:00:00.000 --> 00:00:01.000 line:1.5\nvalid10\n\nNumber.MAX_VALUE\n00:00:00.000 --> 00:00:01.000 line:179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\nvalid11\n\n-1 * Number.MAX_VALUE\n00:00:00.000 --> 00:00:01.000 line:-179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\nvalid12\n\nNumber.MIN_VALUE\n00:00:00.000 --> 00:00:01.000 line:0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000005\nvalid13\n\nLess than Number.MIN_VALUE\n00:00:00.000 --> 00:00:01.000 line:0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000002\nvalid14\n\nNOTE invalid\n\n00:00:00.000 --> 00:00:01.000 line:65536%\ninvalid15\n\n00:00:00.000 --> 00:00:01.000 line:4294967296%\ninvalid16\n\n00:00:00.000 --> 00:00:01.000 line:18446744073709552000%\ninvalid17\n\n00:00:00.000 --> 00:00:01.000 line:10000000000000000000000000000000000%\ninvalid18\n\n00:00:00.000 --> 00:00:01.000 line:-0%\ninvalid19\n\n00:00:00.000 --> 00:00:01.000 line:101%\ninvalid20\n\n00:00:00.000 --> 00:00:01.000 line:1%-\ninvalid21\n\n00:00:00.000 --> 00:00:01.000 line:1-\ninvalid22\n\n00:00:00.000 --> 00:00:01.000 line:%1\ninvalid23\n\n00:00:00.000 --> 00:00:01.000 line:1%%\ninvalid24\n\n00:00:00.000 --> 00:00:01.000 line:0%0\ninvalid25\n\n00:00:00.000 --> 00:00:01.000 line: 0%\ninvalid26\n\n00:00:00.000 --> 00:00:01.000 line:0%x\ninvalid27\n\n00:00:00.000 --> 00:00:01.000 line:-\ninvalid28\n\n00:00:00.000 --> 00:00:01.000 line:%\ninvalid29\n\n00:00:00.000 --> 00:00:01.000 line:1..5\ninvalid30\n\n00:00:00.000 --> 00:00:01.000 line:.5\ninvalid31\n\n00:00:00.000 --> 00:00:01.000 line:5.\ninvalid32\n\nGreater than Number.MAX_VALUE\n00:00:00.000 --> 00:00:01.000 line:179769313486231590000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\ninvalid33\n\nLess than -1 * Number.MAX_VALUE\n00:00:00.000 --> 00:00:01.000 line:-179769313486231590000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\ninvalid34\n\nexponential notation\n00:00:00.000 --> 00:00:01.000 line:1e2\ninvalid35\n\n00:00:00.000 --> 00:00:01.000 line:100%,middle\ninvalid36\n\n00:00:00.000 --> 00:00:01.000 line:100%,\ninvalid37\n\nNOTE extra\n\n00:00:00.000 --> 00:00:01.000 line:0%\ntext38\n\n00:00:00.000 --> 00:00:01.000 line:00%\ntext39\n\n00:00:00.000 --> 00:00:01.000 line:100%\ntext40\n\n00:00:00.000 --> 00:00:01.000 line:100%,start\ntext41\n\n00:00:00.000 --> 00:00:01.000 line:100%,center\ntext42\n\n00:00:00.000 --> 00:00:01.000 line:100%,end\ntext43\n\nNumber.MIN_VALUE %\n00:00:00.000 --> 00:00:01.000 line:0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000005%\ntext44\n\nLess than Number.MIN_VALUE %\n00:00:00.000 --> 00:00:01.000 line:0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000002%\ntext45\n',
    cues: 46,
  },
  {
    name: 'settings-multiple',
    input:
      'WEBVTT\n\nid0\n00:00:00.000 --> 00:00:01.000 align:start line:1% vertical:lr size:50% position:25%\ntext0\n\nid1\n00:00:00.000 --> 00:00:01.000 align:center line:1 vertical:rl size:0% position:100%\ntext1\n',
    cues: 2,
    texts: ['text0', 'text1'],
  },
  {
    name: 'settings-position',
    input:
      'WEBVTT\n\nNOTE valid\n\n00:00:00.000 --> 00:00:01.000 position:1%\ntext0\n\n00:00:00.000 --> 00:00:01.000 position:100%\ntext1\n\n00:00:00.000 --> 00:00:01.000 position:1% position:x\ntext2\n\n00:00:00.000 --> 00:00:01.000 position:1.5%\ntext3\n\n00:00:00.000 --> 00:00:01.000 position:1%,line-left\ntext4\n\n00:00:00.000 --> 00:00:01.000 position:1%,center\ntext5\n\n00:00:00.000 --> 00:00:01.000 position:1%,line-right\ntext6\n\n00:00:00.000 --> 00:00:01.000 position:1% ,center\ntext7\n\nNOTE invalid\n\n00:00:00.000 --> 00:00:01.000 position:1%,middle\ninvalid8\n\n00:00:00.000 --> 00:00:01.000 position:1%, center\ninvalid9\n\n00:00:00.000 --> 00:00:01.000 position:-1%\ninvalid10\n\n00:00:00.000 --> 00:00:01.000 position:1\ninvalid11\n\n00:00:00.000 --> 00:00:01.000 position:1x\ninvalid12\n\n00:00:00.000 --> 00:00:01.000 position:1%x\ninvalid13\n\n00:00:00.000 --> 00:00:01.000 position:\ninvalid14\n\n00:00:00.000 --> 00:00:01.000 position: 1%\ninvalid15\n\n00:00:00.000 --> 00:00:01.000 position:101%\ninvalid16\n\n00:00:00.000 --> 00:00:01.000 position:65536%\ninvalid17\n\n00:00:00.000 --> 00:00:01.000 position:4294967296%\ninvalid18\n\n00:00:00.000 --> 00:00:01.000 position:101%,line-left\ninvalid19\n\n00:00:00.000 --> 00:00:01.000 position:101%,center\ninvalid20\n\n00:00:00.000 --> 00:00:01.000 position:101%,line-right\ninvalid21\n',
    cues: 22,
  },
  {
    name: 'settings-region',
    input:
      'WEBVTT\n\nREGION\nid:foo\n\nREGION\nid:bar\n\nREGION\nid:foo\n\nREGION\nwidth:10%\n\n00:00:00.000 --> 00:00:01.000 region:foo\ntext0\n\n00:00:00.000 --> 00:00:01.000 region:bar\ntext1\n\n00:00:00.000 --> 00:00:01.000 region:foo region:bar\ntext2\n\n00:00:00.000 --> 00:00:01.000 region:invalid\ntext3\n\n00:00:00.000 --> 00:00:01.000 region:invalid region:foo\ntext4\n\n00:00:00.000 --> 00:00:01.000 region:\ninvalid5\n\n00:00:00.000 --> 00:00:01.000 region: \ninvalid6\n\n00:00:00.000 --> 00:00:01.000 region: foo\ninvalid7\n\n00:00:00.000 --> 00:00:01.000 region :foo\ninvalid8\n',
    cues: 9,
  },
  {
    name: 'settings-size',
    input:
      'WEBVTT\n\nNOTE valid\n\n00:00:00.000 --> 00:00:01.000\ntext0\n\n00:00:00.000 --> 00:00:01.000 size:1xx size:2%\ntext1\n\n00:00:00.000 --> 00:00:01.000 size:0%\ntext2\n\n00:00:00.000 --> 00:00:01.000 size:00%\ntext3\n\n00:00:00.000 --> 00:00:01.000 size:50% size:100%\ntext4\n\n00:00:00.000 --> 00:00:01.000 size:50% size:101%\ntext5\n\n00:00:00.000 --> 00:00:01.000 size:1.5%\ntext6\n\nNOTE invalid\n\n00:00:00.000 --> 00:00:01.000 size:\ninvalid7\n\n00:00:00.000 --> 00:00:01.000 size:x\ninvalid8\n\n00:00:00.000 --> 00:00:01.000 size:%\ninvalid9\n\n00:00:00.000 --> 00:00:01.000 size:%%\ninvalid10\n\n00:00:00.000 --> 00:00:01.000 size:1%%\ninvalid11\n\n00:00:00.000 --> 00:00:01.000 size:1%x\ninvalid12\n\n00:00:00.000 --> 00:00:01.000 size:101%\ninvalid13\n\n00:00:00.000 --> 00:00:01.000 size:-3%\ninvalid14\n\n00:00:00.000 --> 00:00:01.000 size:200%\ninvalid15\n',
    cues: 16,
  },
  {
    name: 'settings-vertical',
    input:
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\ntext0\n\n00:00:00.000 --> 00:00:01.000 vertical:lr\ntext1\n\n00:00:00.000 --> 00:00:01.000 vertical:rl\ntext2\n\n00:00:00.000 --> 00:00:01.000 vertical:rl vertical:lr\ntext3\n\n00:00:00.000 --> 00:00:01.000 vertical:\ninvalid4\n\n00:00:00.000 --> 00:00:01.000 vertical:RL\ninvalid5\n\n00:00:00.000 --> 00:00:01.000 vertical: rl\ninvalid6\n\n00:00:00.000 --> 00:00:01.000 vertical:vertical-rl\ninvalid7\n',
    cues: 8,
  },
  {
    name: 'regions-id',
    input:
      'WEBVTT\n\nNOTE No API for accessing region ids, so using lines to uniquely identify regions\n\nREGION\nid:foo\nid:bar\nlines:1\n\nREGION\nid:bar id:foo\nlines:2\n\nREGION\nid:id\nid: foo\nid :bar\nlines:3\n\nREGION\nid:\u000b\nlines:4\n\n00:00:00.000 --> 00:00:01.000 region:foo\nvalid\n\n00:00:00.000 --> 00:00:01.000 region:bar\nvalid\n\n00:00:00.000 --> 00:00:01.000 region:id\nvalid\n\n00:00:00.000 --> 00:00:01.000 region:\u000b\nvalid\n',
    cues: 4,
  },
  {
    name: 'regions-lines',
    input:
      'WEBVTT\n\nNOTE valid\n\nREGION\nid:1\nlines:0\n\nREGION\nid:2\nlines:1\n\nREGION\nid:3\nlines:100\n\nREGION\nid:4\nlines:101\n\nREGION\nid:5\nlines:65536\n\nREGION\nid:6\nlines:4294967296\n\nREGION\nid:7\nlines:18446744073709552000\n\nREGION\nid:8\nlines:10000000000000000000000000000000000\n\nREGION\nid:9\nlines:1 lines:3\nlines:2\n\nNOTE invalid\n\nREGION\nid:10\nlines:-0\n\nREGION\nid:11\nlines:1.5\n\nREGION\nid:12\nlines:-1\n\nREGION\nid:13\nlines: 1\nlines :1\n\n00:00:00.000 --> 00:00:01.000 region:1\ntext\n\n00:00:00.000 --> 00:00:01.000 region:2\ntext\n\n00:00:00.000 --> 00:00:01.000 region:3\ntext\n\n00:00:00.000 --> 00:00:01.000 region:4\ntext\n\n00:00:00.000 --> 00:00:01.000 region:5\ntext\n\n00:00:00.000 --> 00:00:01.000 region:6\ntext\n\n00:00:00.000 --> 00:00:01.000 region:7\ntext\n\n00:00:00.000 --> 00:00:01.000 region:8\ntext\n\n00:00:00.000 --> 00:00:01.000 region:9\ntext\n\n00:00:00.000 --> 00:00:01.000 region:10\ntext\n\n00:00:00.000 --> 00:00:01.000 region:11\ntext\n\n00:00:00.000 --> 00:00:01.000 region:12\ntext\n\n00:00:00.000 --> 00:00:01.000 region:13\ntext\n',
    cues: 13,
  },
  {
    name: 'regions-old',
    input:
      'WEBVTT\nRegion: id=foo width=40% lines=3 regionanchor=0%,100% viewportanchor=10%,90% scroll=up\nRegion: id=bar width=40% lines=3 regionanchor=100%,100% viewportanchor=90%,90% scroll=up\n\n00:00:00.000 --> 00:00:01.000 region:foo\ntext0\n\n00:00:00.000 --> 00:00:01.000 region:bar\ntext1\n',
    cues: 2,
  },
];
