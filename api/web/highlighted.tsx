import type { VNode } from 'preact';
import type { Highlight } from '../../core/fts/highlight.ts';

/** A search's highlight as text and <mark> elements (preact escapes the text: no HTML is ever read back). */
export function Highlighted({ highlight }: { highlight: Highlight }): VNode {
  return <>{highlight.map(({ text, marked }) => (marked ? <mark>{text}</mark> : text))}</>;
}
