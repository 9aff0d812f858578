import { describe, expect, it } from 'vitest';
import { decodeEntities } from '../../core/text/entities.ts';

describe('decodeEntities', () => {
  it.each([
    ['Tom &amp; Jerry', 'Tom & Jerry'],
    ['YouTube&#39;s API', "YouTube's API"],
    ['&#x27;quoted&#X27;', "'quoted'"],
    ['&lt;b&gt; &#65;&#x42;', '<b> AB'],
    ['a&nbsp;b', 'a\u00a0b'],
    ['&hellip; &mdash; &eacute; &frac12;', '… — é ½'],
    ['&AMP; &Quot;', '& "'],
    ['&Eacute;', '&Eacute;'],
    ['&#x1F600;', '😀'],
    ['&#0; &#xD800; &#x110000;', '\ufffd \ufffd \ufffd'],
    ['&amp;lt; &amp;#39;', '&lt; &#39;'],
    ['&unknown; & alone; AT&T', '&unknown; & alone; AT&T'],
    ['no references', 'no references'],
  ])('%j → %j', (input, output) => {
    expect(decodeEntities(input)).toBe(output);
  });
});
