import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { highlighter } from '../../core/fts/highlight.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { Highlighted } from '../../api/web/highlighted.tsx';

describe('Highlighted', () => {
  it('renders marked parts as <mark> elements and every part as text, escaped once', () => {
    const marked = highlighter(parseQuery('lathe'))('<b>Old</b> lathe & "co" <mark>x</mark>')!;
    expect(renderToString(h(Highlighted, { highlight: marked }))).toBe(
      '&lt;b>Old&lt;/b> <mark>lathe</mark> &amp; &quot;co&quot; &lt;mark>x&lt;/mark>',
    );
  });
});
