import type { Cue } from './cue.ts';
import { SPEAKER_MARKER } from './cue.ts';
import { ENTITY } from '../text/entities.ts';
import { formatTimestamp } from './timestamps.ts';

/**
 * SRT has no escaping of its own, so only what parseSrt would take for markup is escaped: "&" that
 * starts a character reference, "<" that could start a tag, and the ">" of "-->" (which would read
 * as a timing line). "Tom & Jerry" and "a < b" stay as they are.
 */
export function escapeSrtText(text: string): string {
  return text
    .replace(ENTITY, (reference) => `&amp;${reference.slice(1)}`)
    .replace(/<(?=[A-Za-z0-9/])/g, '&lt;')
    .replaceAll('-->', '--&gt;');
}

/** SRT with 1-based indexes and HH:MM:SS,mmm times; a speaker change is written ">> " first. */
export function renderSrt(cues: readonly Cue[]): string {
  return cues
    .map((cue, index) => {
      const text = escapeSrtText(cue.speakerChange ? `${SPEAKER_MARKER} ${cue.text}` : cue.text);
      return `${index + 1}\n${formatTimestamp(cue.startMs, ',')} --> ${formatTimestamp(cue.endMs, ',')}\n${text}${text ? '\n' : ''}`;
    })
    .join('\n');
}
