import type { VNode } from 'preact';
import { clock } from '../../core/text/clock.ts';

/** `[m:ss]` or `[h:mm:ss]` at a paragraph's start, as core/stenograms/stenogramMarkdown.ts writes it. */
const SPOKEN = /^\*\*\[(\d+(?::\d{2}){1,2})\] (.*?):\*\* (.*)$/;
const DIRECTION = /^\*(.*)\*$/;
const HEADING = /^# (.*)$/;
/** The stenogram's own escapes (a backslash before Markdown's punctuation) read back as the text. */
const unescapeMarkdown = (text: string) => text.replace(/\\(.)/g, '$1');
const seconds = (time: string) => time.split(':').reduce((total, part) => total * 60 + Number(part), 0);

/**
 * A stenogram's Markdown shown as the page's own markup, every text escaped by preact: the
 * document's few shapes (a heading, the facts line, spoken paragraphs with their time and speaker,
 * stage directions) and anything else as a plain paragraph. Times are links that seek the player.
 */
export function StenogramView({ markdown }: { markdown: string }): VNode {
  const blocks = markdown
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter(Boolean);
  return (
    <div class="stenogram">
      {blocks.map((block, index) => {
        const heading = HEADING.exec(block);
        if (heading) return <h3 key={index}>{unescapeMarkdown(heading[1]!)}</h3>;
        const spoken = SPOKEN.exec(block);
        if (spoken) {
          const at = seconds(spoken[1]!);
          return (
            <p key={index}>
              <a href={`?t=${at}#player`} data-seconds={at}>
                {clock(at)}
              </a>{' '}
              <strong>{unescapeMarkdown(spoken[2]!)}:</strong> {unescapeMarkdown(spoken[3]!)}
            </p>
          );
        }
        const direction = DIRECTION.exec(block);
        if (direction)
          return (
            <p key={index} class="direction">
              <em>{unescapeMarkdown(direction[1]!)}</em>
            </p>
          );
        return <p key={index}>{unescapeMarkdown(block)}</p>;
      })}
    </div>
  );
}
