import type { Cue } from './cue.ts';
import { SPEAKER_MARKER } from './cue.ts';

/** hh:mm:ss (or m:ss under an hour), the way people quote a moment of a video. */
function clock(ms: number): string {
  const total = Math.floor(ms / 1000);
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

/**
 * One page of a transcript as `[m:ss] text` lines (for assistants: short, quotable, no cue numbers),
 * `perPage` cues a page, pages counted from 1.
 */
export function timestampedText(
  cues: readonly Cue[],
  page: number,
  perPage: number,
): { text: string; page: number; totalPages: number; cues: number; fromMs: number | null; toMs: number | null } {
  const slice = cues.slice((page - 1) * perPage, page * perPage);
  const text = slice
    .map((cue) => `[${clock(cue.startMs)}] ${cue.speakerChange ? `${SPEAKER_MARKER} ` : ''}${cue.text.replace(/\s*\n\s*/g, ' ')}`)
    .join('\n');
  return {
    text,
    page,
    totalPages: Math.max(1, Math.ceil(cues.length / perPage)),
    cues: slice.length,
    fromMs: slice[0]?.startMs ?? null,
    toMs: slice.at(-1)?.endMs ?? null,
  };
}
