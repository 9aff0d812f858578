import type { Cue } from './cue.ts';
import { SPEAKER_MARKER } from './cue.ts';

/**
 * Plain text, one line per cue. A speaker change starts its line with ">> ", the marker the
 * captions themselves use (a dash would be confused with dashes in the words).
 */
export function renderText(cues: readonly Cue[]): string {
  return cues.map((cue) => `${cue.speakerChange ? `${SPEAKER_MARKER} ` : ''}${cue.text.replace(/\s+/g, ' ').trim()}\n`).join('');
}
