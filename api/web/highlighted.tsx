import type { VNode } from 'preact';
import { decodeEntities } from '../../core/text/entities.ts';

const MARKED = /<mark>(.*?)<\/mark>/g;

/**
 * A search backend's highlight (HTML-escaped text with <mark>…</mark> around each match) as text and
 * <mark> elements: the string is read back into its parts, never put into the page as HTML.
 */
export function Highlighted({ html }: { html: string }): VNode {
  const parts: Array<string | VNode> = [];
  let at = 0;
  for (const match of html.matchAll(MARKED)) {
    if (match.index > at) parts.push(decodeEntities(html.slice(at, match.index)));
    parts.push(<mark>{decodeEntities(match[1]!)}</mark>);
    at = match.index + match[0].length;
  }
  if (at < html.length) parts.push(decodeEntities(html.slice(at)));
  return <>{parts}</>;
}
