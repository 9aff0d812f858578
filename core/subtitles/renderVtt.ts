import type { Cue } from './cue.ts';
import { SPEAKER_MARKER } from './cue.ts';
import { formatTimestamp } from './timestamps.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** WebVTT cue text escaping; escaping ">" also keeps "-->" out of cue text. */
function escapeVttText(text: string): string {
  return text.replace(/[&<>]/g, (char) => ESCAPES[char]!);
}

/** WebVTT: the header, then cues with HH:MM:SS.mmm times; a speaker change is written ">> " first. */
export function renderVtt(cues: readonly Cue[]): string {
  const blocks = cues.map((cue) => {
    const text = escapeVttText(cue.speakerChange ? `${SPEAKER_MARKER} ${cue.text}` : cue.text);
    return `${formatTimestamp(cue.startMs, '.')} --> ${formatTimestamp(cue.endMs, '.')}\n${text}${text ? '\n' : ''}`;
  });
  return ['WEBVTT\n', ...blocks].join('\n');
}
