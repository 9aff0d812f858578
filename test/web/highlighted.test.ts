import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { highlighter } from '../../core/fts/highlight.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { Highlighted } from '../../api/web/highlighted.tsx';

const render = (html: string) => renderToString(h(Highlighted, { html }));

describe('Highlighted', () => {
  it("turns the backend's markers into <mark> elements and everything else into text", () => {
    const marked = highlighter(parseQuery('lathe'))('<b>Old</b> lathe & "co"')!;
    expect(render(marked)).toBe('&lt;b>Old&lt;/b> <mark>lathe</mark> &amp; &quot;co&quot;');
  });

  it('never lets markup through, even markup a highlight should not hold', () => {
    expect(render('a <mark>b</mark> <img src=x onerror=alert(1)> <mark><i>c</i></mark>')).toBe(
      'a <mark>b</mark> &lt;img src=x onerror=alert(1)> <mark>&lt;i>c&lt;/i></mark>',
    );
  });
});
