/**
 * A stenogram's blocks as its Markdown document, the same for both generators: a heading with the
 * title, a line with the channel, the video's address and the language, then a paragraph per block,
 * `**[m:ss] Speaker:** words`, and stage directions as italic lines of their own.
 */
import { clock } from '../text/clock.ts';
import type { GeneratedStenogram, StenogramInput } from './stenogram.ts';
import type { Block } from './writeParagraphs.ts';

// What can open emphasis, code, a link, HTML or strikethrough anywhere in a line (the backslash
// first, so escapes stay escapes). Block syntax (#, >, lists) only counts at a line's start, where
// a tag or an asterisk always stands. Ordinary punctuation is left alone.
const INLINE = /[\\`*~<[\]]/g;
const INLINE_BUT_BRACKETS = /[\\`*~<]/g;
// "_" makes emphasis only at a word's edge: snake_case is left as written.
const EDGE_UNDERSCORE = /(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;
// "&amp;" would show as "&": an ampersand that starts an entity is escaped, "AT&T" is not.
const ENTITY = /&(?=#?[\p{L}\p{N}]+;)/gu;
// A heading's "#"s (a trailing one would close it).
const HASH = /#/g;

/** Transcript text that renders as written. `brackets` false keeps `[Music]` readable where no link can follow. */
export function escapeMarkdown(text: string, brackets = true): string {
  return text
    .replace(brackets ? INLINE : INLINE_BUT_BRACKETS, '\\$&')
    .replace(EDGE_UNDERSCORE, '\\_')
    .replace(ENTITY, '\\&');
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const headingText = (text: string) => escapeMarkdown(oneLine(text)).replace(HASH, '\\#');

function header(input: Pick<StenogramInput, 'videoId' | 'title' | 'channelTitle'>, language: string): string {
  const title = input.title && oneLine(input.title) ? input.title : `Video ${input.videoId}`;
  const facts = [
    ...(input.channelTitle && oneLine(input.channelTitle) ? [`Channel: ${headingText(input.channelTitle)}`] : []),
    `Video: https://www.youtube.com/watch?v=${encodeURIComponent(input.videoId)}`,
    `Language: ${language}`,
  ];
  return `# ${headingText(title)}\n\n${facts.join(' · ')}`;
}

function blockMarkdown(block: Block): string {
  if (block.kind === 'direction') return `*${escapeMarkdown(oneLine(block.text), false)}*`;
  return `**[${clock(block.start)}] ${escapeMarkdown(block.speaker)}:** ${escapeMarkdown(block.text)}`;
}

/** The document and what the stenogram counts: speakers, paragraphs and spoken words (directions and lyrics are not counted). */
export function renderStenogram(
  input: Pick<StenogramInput, 'videoId' | 'title' | 'channelTitle'>,
  language: string,
  blocks: readonly Block[],
): Pick<GeneratedStenogram, 'markdown' | 'speakers' | 'paragraphs' | 'words'> {
  const paragraphs = blocks.filter((block) => block.kind === 'paragraph');
  const body = blocks.map(blockMarkdown);
  return {
    markdown: `${[header(input, language), ...body].join('\n\n')}\n`,
    speakers: new Set(paragraphs.map((paragraph) => paragraph.speaker)).size,
    paragraphs: paragraphs.length,
    words: paragraphs.reduce((sum, paragraph) => sum + paragraph.words, 0),
  };
}
