/**
 * What a summary says, whoever wrote it (an LLM or the offline generator): the one schema that the
 * LLM's answer is checked with, that the offline generator fills, that is stored and that the API
 * answers with.
 */
import { z } from 'zod';
import type { TranscriptCue } from '../subtitles/transcriptCue.ts';

export const keyPoint = z.object({
  text: z.string().min(1).describe('one point, a sentence or two'),
  startSeconds: z.number().int().min(0).describe('where in the video the point is made'),
});
export type KeyPoint = z.infer<typeof keyPoint>;

export const summaryContent = z.object({
  title: z.string().min(1).describe('a short title for what the video is about'),
  tldr: z.string().min(1).describe('two or three sentences'),
  keyPoints: z.array(keyPoint).min(1).max(12).describe('in the order of the video'),
  detailedSummary: z.string().min(1).describe('paragraphs in the order of the video, separated by blank lines'),
  tags: z.array(z.string().min(1).max(40)).max(12).describe('salient topics, lower case'),
  language: z
    .string()
    .regex(/^[a-z]{2,3}$/)
    .describe('ISO 639-1 code (639-3 when there is none) of the summary'),
});
export type SummaryContent = z.infer<typeof summaryContent>;

/** Tokens an LLM used for one summary (all calls of a long transcript added up); null for the offline generator. */
export const tokenUsage = z.object({ prompt: z.number().int().min(0), completion: z.number().int().min(0) });
export type TokenUsage = z.infer<typeof tokenUsage>;

/** What a generator is given: the video's transcript (the chosen track's cues) and what is known of it. */
export interface SummaryInput {
  videoId: string;
  title: string | null;
  /** The transcript track's language, when known (a hint: generators detect it from the text too). */
  language: string | null;
  cues: TranscriptCue[];
}

export interface GeneratedSummary extends SummaryContent {
  /** Which generator wrote it: the LLM's model name, or the offline generator's (afterimage-extractive-1). */
  llmModel: string;
  tokensUsed: TokenUsage | null;
}

/** Progress a generator reports while it works (summary:progress events). */
export interface SummaryProgress {
  stage: 'reading' | 'chunk' | 'combining' | 'writing';
  percent: number;
  chunk?: number;
  of?: number;
}

export interface SummaryGenerator {
  /** The model name recorded as llmModel. */
  readonly model: string;
  summarise(
    input: SummaryInput,
    options?: { signal?: AbortSignal; onProgress?: (progress: SummaryProgress) => void },
  ): Promise<GeneratedSummary>;
}
