import type { Cue, OutputFormat } from './cue.ts';
import { renderSrt } from './renderSrt.ts';
import { renderText } from './renderText.ts';
import { renderVtt } from './renderVtt.ts';

/** Cues (normalised ones, as parse gives) to SRT, WebVTT or plain text. */
export function render(cues: readonly Cue[], format: OutputFormat): string {
  if (format === 'srt') return renderSrt(cues);
  if (format === 'vtt') return renderVtt(cues);
  return renderText(cues);
}
