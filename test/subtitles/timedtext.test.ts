import { describe, expect, it } from 'vitest';
import { parse } from '../../core/subtitles/parse.ts';
import { parseTimedtext } from '../../core/subtitles/parseTimedtext.ts';

describe('parseTimedtext', () => {
  it('reads srv1 with escaped markup, double-escaped entities and empty texts', () => {
    const xml = `<?xml version="1.0" encoding="utf-8" ?><transcript>
<text start="0" dur="1.54">Hey, this is just a test</text>
<text start="1.54" dur="4.16">this is &lt;i&gt;not&lt;/i&gt; the &amp;quot;original&amp;quot; one</text>
<text start="5" dur="0.5"></text>
<text start="5.7" dur="3.239">I&amp;#39;m here &amp;amp; there
second line</text>
<text start="9"/>
</transcript>`;
    expect(parseTimedtext(xml)).toEqual([
      { startMs: 0, endMs: 1540, text: 'Hey, this is just a test' },
      { startMs: 1540, endMs: 5700, text: 'this is not the "original" one' },
      { startMs: 5000, endMs: 5500, text: '' },
      { startMs: 5700, endMs: 8939, text: "I'm here & there\nsecond line" },
      { startMs: 9000, endMs: 9000, text: '' },
    ]);
    expect(parse(xml).map((cue) => cue.text)).toEqual([
      'Hey, this is just a test',
      'this is not the "original" one',
      "I'm here & there second line",
    ]);
  });

  it('reads srv3: word spans joined, append paragraphs dropped, <br/> as a line break, literal markup kept', () => {
    const xml = `<?xml version="1.0" encoding="utf-8" ?><timedtext format="3">
<head><ws id="0"/><wp id="0"/><pen id="1" fc="#E5E5E5"/></head>
<body>
<w t="0" id="1" wp="1" ws="1"/>
<p t="80" d="3309" w="1"><s ac="0">when</s><s t="119" ac="0"> I</s><s t="200" ac="0"> started</s></p>
<p t="1309" d="2080" w="1" a="1">
</p>
<p t="1319" d="3000" w="1"><s ac="0">&gt;&gt; it&#39;s</s><s t="361" ac="0"> done</s></p>
<p t="5000" d="1000">[Music]<br/>two &amp;lt;b&amp;gt;lines&amp;lt;/b&amp;gt;</p>
</body></timedtext>`;
    expect(parse(xml)).toEqual([
      { startMs: 80, endMs: 3389, text: 'when I started' },
      { startMs: 1319, endMs: 4319, text: "it's done", speakerChange: true },
      { startMs: 5000, endMs: 6000, text: '[Music] two <b>lines</b>' },
    ]);
  });

  it('reads srv2 (milliseconds in t and d)', () => {
    const xml =
      '<?xml version="1.0" encoding="utf-8" ?><timedtext><text t="1000" d="2000" w="1">one</text><text t="3000" d="500">two</text></timedtext>';
    expect(parseTimedtext(xml)).toEqual([
      { startMs: 1000, endMs: 3000, text: 'one' },
      { startMs: 3000, endMs: 3500, text: 'two' },
    ]);
  });

  it('reads times only from plain decimals: a hex, exponent or negative time is no time', () => {
    const xml =
      '<timedtext><text t="0x10" d="100">hex</text><text t="-5" d="100">negative</text><text t="1000" d="1e3">exponent</text><text t="2000" d=" 500 ">ok</text></timedtext>';
    expect(parseTimedtext(xml)).toEqual([
      { startMs: 1000, endMs: 1000, text: 'exponent' },
      { startMs: 2000, endMs: 2500, text: 'ok' },
    ]);
  });
});
