/**
 * One caption on screen. `text` may hold several lines ("\n") as a codec reads them; after
 * normaliseCues it is one line, and a speaker change is the flag, not a `>>` in the text.
 */
export type Cue = {
  startMs: number;
  endMs: number;
  text: string;
  speakerChange?: boolean;
};

/** The formats the codecs read: WebVTT, SRT, YouTube timedtext XML (srv1, srv2, srv3) and json3. */
export const inputFormats = ['vtt', 'srt', 'srv1', 'srv2', 'srv3', 'json3'] as const;
export type InputFormat = (typeof inputFormats)[number];

/** The formats the renderers write. */
export const outputFormats = ['srt', 'vtt', 'txt'] as const;
export type OutputFormat = (typeof outputFormats)[number];

/** The marker captioners put before a new speaker's words; the renderers write it back. */
export const SPEAKER_MARKER = '>>';
