/** A cue of a transcript as generators read it: in seconds (the stored Cue counts milliseconds); `speakerChange` is the normalised `>>` of the captions. */
export interface TranscriptCue {
  start: number;
  end: number;
  text: string;
  speakerChange?: boolean;
}
