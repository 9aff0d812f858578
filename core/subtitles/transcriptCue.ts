/** A cue of a transcript as generators read it: in seconds (the stored Cue counts milliseconds). */
export interface TranscriptCue { start: number; end: number; text: string }
