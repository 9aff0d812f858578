/**
 * What a stenogram is, whoever writes it (an LLM or the offline generator): a word-for-word
 * dialogue transcript with speaker tags, as Markdown, built from a video's completed transcript.
 */
import type { TokenUsage } from '../llm/types.ts';

/** A cue of the transcript, in seconds; `speakerChange` is the normalised `>>` of the captions. */
export interface StenogramCue {
  start: number;
  end: number;
  text: string;
  speakerChange?: boolean;
}

export interface StenogramInput {
  videoId: string;
  title: string | null;
  channelTitle: string | null;
  /** The caller's ISO 639-1/639-2 hint, else the transcript track's language; generators detect it too. */
  language: string | null;
  cues: StenogramCue[];
}

export interface GeneratedStenogram {
  /** The Markdown document: a heading, then paragraphs `**[m:ss] Speaker N:** words…`, stage directions kept. */
  markdown: string;
  /** ISO 639-1 (639-3 where there is none) of the text. */
  language: string;
  /** The LLM's model name, or the offline generator's (afterimage-stenogram-1). */
  llmModel: string;
  /** null for the offline generator. */
  tokensUsed: TokenUsage | null;
  speakers: number;
  paragraphs: number;
  words: number;
  /** Chunks the LLM wrote, and how many of them failed the word-for-word guard and are the offline text instead. */
  chunks: number;
  fallbackChunks: number;
}

/** Progress a generator reports (stenogram:progress events). */
export interface StenogramProgress {
  stage: 'reading' | 'chunk' | 'writing';
  percent: number;
  chunk?: number;
  of?: number;
}

export interface StenogramGenerator {
  readonly model: string;
  generate(
    input: StenogramInput,
    options?: { signal?: AbortSignal; onProgress?: (progress: StenogramProgress) => void },
  ): Promise<GeneratedStenogram>;
}
