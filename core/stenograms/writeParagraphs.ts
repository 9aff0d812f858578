/**
 * Pieces of a transcript as the stenogram's blocks: paragraphs of one speaker, and stage directions
 * on lines of their own. A paragraph ends where the speaker changes or a turn opens, at a pause, at
 * a stage direction, and once it is long: at the first sentence end after SOFT_WORDS words, or,
 * in captions without punctuation, at the first end of a piece (a caption's speech, at most 60
 * words of it) after HARD_WORDS.
 */
import type { Piece } from './readTranscript.ts';

// About a minute of speech: long enough to read as a paragraph, short enough to find a place by its time.
const SOFT_WORDS = 120;
const HARD_WORDS = 200;

export type Block =
  | { kind: 'paragraph'; start: number; speaker: string; text: string; words: number }
  | { kind: 'direction'; start: number; text: string };

export function writeParagraphs(pieces: readonly Piece[]): Block[] {
  const blocks: Block[] = [];
  let open: { start: number; speaker: string; texts: string[]; words: number } | undefined;
  const close = () => {
    if (open) blocks.push({ kind: 'paragraph', start: open.start, speaker: open.speaker, text: open.texts.join(' '), words: open.words });
    open = undefined;
  };
  for (const piece of pieces) {
    if (piece.kind === 'direction') {
      close();
      blocks.push(piece);
      continue;
    }
    if (piece.turn || piece.pause || open?.speaker !== piece.speaker) close();
    piece.fragments.forEach((fragment, index) => {
      open ??= { start: piece.start, speaker: piece.speaker, texts: [], words: 0 };
      open.texts.push(fragment.text);
      open.words += fragment.words;
      const pieceEnd = index === piece.fragments.length - 1;
      if ((open.words >= SOFT_WORDS && fragment.sentenceEnd) || (open.words >= HARD_WORDS && pieceEnd)) close();
    });
  }
  close();
  return blocks;
}
