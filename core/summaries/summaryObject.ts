/**
 * A summary as the API shows it: the stored row with its video and channel, read by every summary
 * route and the public page through SUMMARY_COLUMNS and toSummaryObject.
 */
import { z } from 'zod';
import { generationStatus, type GenerationProgress, type GenerationStatus } from '../generations/generationKind.ts';
import { keyPoint, tokenUsage } from './summary.ts';

export const summaryObject = z.object({
  videoId: z.string(),
  status: generationStatus,
  private: z.boolean().describe('visible to its owner only, never listed'),
  title: z.string().nullable().describe('what the video is about (null until generated)'),
  videoTitle: z.string().nullable(),
  channelId: z.string(),
  channelTitle: z.string().nullable(),
  tldr: z.string().nullable(),
  keyPoints: z.array(keyPoint.extend({ url: z.string().describe('the video at this point') })),
  detailedSummary: z.string().nullable().describe('paragraphs in the order of the video, separated by blank lines'),
  tags: z.array(z.string()),
  language: z.string().nullable().describe('ISO 639-1 code (639-3 when there is none)'),
  llmModel: z.string().nullable().describe('the LLM model, or afterimage-extractive-1 for the built-in offline generator'),
  tokensUsed: z.number().int().nullable().describe('prompt + completion tokens of every LLM call; null for the offline generator'),
  tokenUsage: tokenUsage.nullable(),
  transcript: z
    .object({ language: z.string(), kind: z.string(), version: z.number().int() })
    .nullable()
    .describe('the subtitle track version it was built from'),
  requestedAt: z.string().describe('ISO 8601'),
  generatedAt: z.string().nullable().describe('ISO 8601, when it was generated'),
  error: z.string().nullable().describe('why the generation failed'),
  streamUrl: z.string().describe('Server-Sent Events of the generation (summary:progress, summary:complete, summary:error)'),
  pageUrl: z.string().nullable().describe('the public HTML page (public generated summaries only)'),
});
export type SummaryObject = z.infer<typeof summaryObject>;

/** Where a summary row is read from: with its video and channel. */
export const SUMMARY_SOURCE = 'summaries s join videos v on v.video_id = s.video_id join channels c on c.channel_id = s.channel_id';

/** The columns of SUMMARY_SOURCE every summary read selects, a list's included: none of them long. */
const SHORT_COLUMNS = [
  's.id::text as id',
  's.video_id',
  's.status',
  's.private',
  's.owner_id::text as owner_id',
  's.title',
  'v.title as video_title',
  's.channel_id',
  "nullif(c.title, '') as channel_title",
  's.tldr',
  's.tags',
  's.language',
  's.llm_model',
  's.prompt_tokens',
  's.completion_tokens',
  's.transcript_language',
  's.transcript_kind',
  's.transcript_version',
  's.requested_at',
  's.generated_at',
  's.error',
  's.charged_window_start',
  's.progress',
];

/** The select list that toSummaryObject reads, from SUMMARY_SOURCE: a whole summary, its long parts too. */
export const SUMMARY_COLUMNS = [...SHORT_COLUMNS, 's.key_points', 's.detailed_summary'].join(', ');

/** The select list of a list item: the long parts left out (never read, never sent). */
export const SUMMARY_LIST_COLUMNS = [...SHORT_COLUMNS, 'null::jsonb as key_points', 'null::text as detailed_summary'].join(', ');

export interface SummaryRow {
  id: string;
  video_id: string;
  status: GenerationStatus;
  private: boolean;
  owner_id: string | null;
  title: string | null;
  video_title: string | null;
  channel_id: string;
  channel_title: string | null;
  tldr: string | null;
  key_points: Array<{ text: string; startSeconds: number }> | null;
  detailed_summary: string | null;
  tags: string[];
  language: string | null;
  llm_model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  transcript_language: string | null;
  transcript_kind: string | null;
  transcript_version: number | null;
  requested_at: Date;
  generated_at: Date | null;
  error: string | null;
  charged_window_start: Date | null;
  progress: GenerationProgress | null;
}

/** A summary in a list (browse, latest): what a card shows, without the long parts; GET /api/summary/{videoId} has the rest. */
export const summaryListItem = summaryObject.omit({
  keyPoints: true,
  detailedSummary: true,
  tokenUsage: true,
  transcript: true,
  error: true,
});
export type SummaryListItem = z.infer<typeof summaryListItem>;

export function toSummaryListItem(row: SummaryRow): SummaryListItem {
  const {
    keyPoints: _keyPoints,
    detailedSummary: _detailed,
    tokenUsage: _usage,
    transcript: _transcript,
    error: _error,
    ...item
  } = toSummaryObject(row);
  return item;
}

/** A link to the video at a second, as the platform's players understand it. */
const watchUrl = (videoId: string, seconds: number) => `https://www.youtube.com/watch?v=${videoId}&t=${seconds}s`;

const summaryStreamUrl = (videoId: string) => `/api/summary/${videoId}/stream`;
export const summaryPageUrl = (videoId: string) => `/summaries/${videoId}`;

export function toSummaryObject(row: SummaryRow): SummaryObject {
  const usage =
    row.prompt_tokens === null || row.completion_tokens === null ? null : { prompt: row.prompt_tokens, completion: row.completion_tokens };
  return {
    videoId: row.video_id,
    status: row.status,
    private: row.private,
    title: row.title,
    videoTitle: row.video_title,
    channelId: row.channel_id,
    channelTitle: row.channel_title,
    tldr: row.tldr,
    keyPoints: (row.key_points ?? []).map((point) => ({ ...point, url: watchUrl(row.video_id, point.startSeconds) })),
    detailedSummary: row.detailed_summary,
    tags: row.tags,
    language: row.language,
    llmModel: row.llm_model,
    tokensUsed: usage ? usage.prompt + usage.completion : null,
    tokenUsage: usage,
    transcript:
      row.transcript_language && row.transcript_kind && row.transcript_version !== null
        ? { language: row.transcript_language, kind: row.transcript_kind, version: row.transcript_version }
        : null,
    requestedAt: row.requested_at.toISOString(),
    generatedAt: row.generated_at?.toISOString() ?? null,
    error: row.error,
    streamUrl: summaryStreamUrl(row.video_id),
    pageUrl: row.status === 'generated' && !row.private ? summaryPageUrl(row.video_id) : null,
  };
}
