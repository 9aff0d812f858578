/**
 * A stenogram's metadata as the meta endpoint, the list and stenogram:complete show it: the fields
 * of api-spec §2.4 first, then what a client needs to trust and find it.
 */
import { z } from 'zod';
import { generationStatus, type GenerationProgress, type GenerationStatus } from '../generations/generationKind.ts';
import type { Queryable } from '../db/database.ts';

// The spec (§2.4) types title, channelTitle, language and llmModel as strings: a text not known yet
// (stenogram:started before any language was asked for or detected, before a model wrote anything)
// is left out, never an empty string that reads as a value.
export const stenogramMetadata = z.object({
  videoId: z.string(),
  title: z.string().optional().describe("the video's title (absent while unknown)"),
  channelTitle: z.string().optional().describe("the channel's title (absent while unknown)"),
  channelId: z.string(),
  language: z
    .string()
    .optional()
    .describe('ISO 639-1 (639-2/3 where there is none) of the text; while generating, the language asked for, absent if none was'),
  tokensUsed: z.number().int().describe('prompt + completion tokens of every LLM call; 0 for the offline generator'),
  llmModel: z
    .string()
    .optional()
    .describe('the LLM model, or afterimage-stenogram-1 for the built-in offline generator; absent while generating'),
  generatedAt: z.string().nullable().describe('ISO 8601; null while generating'),
  status: generationStatus,
  error: z.string().nullable(),
  speakers: z.number().int().nullable(),
  paragraphs: z.number().int().nullable(),
  words: z.number().int().nullable(),
  chunks: z.number().int().nullable().describe('parts an LLM wrote (0 offline)'),
  fallbackChunks: z
    .number()
    .int()
    .nullable()
    .describe('parts whose LLM text was not word for word or named a speaker the captions do not, replaced by the offline text'),
  bytes: z.number().int().nullable().describe('UTF-8 bytes of the Markdown'),
  sha256: z.string().nullable().describe('SHA-256 (hex) of the Markdown'),
  transcript: z
    .object({ language: z.string(), kind: z.string(), version: z.number().int() })
    .nullable()
    .describe('the subtitle track version it was built from'),
  requestedAt: z.string(),
  markdownUrl: z.string().describe('GET it: text/markdown'),
  streamUrl: z.string().describe('Server-Sent Events of the generation; resumable with Last-Event-ID'),
});
export type StenogramMetadata = z.infer<typeof stenogramMetadata>;

/** Where a stenogram row is read from: with its video and channel. */
export const STENOGRAM_SOURCE = 'stenograms g join videos v on v.video_id = g.video_id join channels c on c.channel_id = v.channel_id';

/** The select list toMetadata reads, from STENOGRAM_SOURCE. */
export const STENOGRAM_COLUMNS = `g.id::text as id, g.owner_id::text as owner_id, g.video_id, g.status, g.error,
  nullif(coalesce(g.title, v.title), '') as title, nullif(coalesce(g.channel_title, c.title), '') as channel_title, v.channel_id,
  coalesce(g.language, g.requested_language) as language, g.llm_model, g.prompt_tokens, g.completion_tokens,
  g.speakers, g.paragraphs, g.words, g.chunks, g.fallback_chunks, g.bytes, g.content_sha256,
  g.transcript_language, g.transcript_kind, g.transcript_version, g.requested_at, g.generated_at,
  g.charged_window_start, g.requested_language, g.progress`;

export interface StenogramRow {
  id: string;
  owner_id: string;
  video_id: string;
  status: GenerationStatus;
  error: string | null;
  title: string | null;
  channel_title: string | null;
  channel_id: string;
  language: string | null;
  llm_model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  speakers: number | null;
  paragraphs: number | null;
  words: number | null;
  chunks: number | null;
  fallback_chunks: number | null;
  bytes: number | null;
  content_sha256: string | null;
  transcript_language: string | null;
  transcript_kind: string | null;
  transcript_version: number | null;
  requested_at: Date;
  generated_at: Date | null;
  charged_window_start: Date | null;
  requested_language: string | null;
  progress: GenerationProgress | null;
}

/** Where a stenogram is read: the spec's `@:userId` path segment. */
export const stenogramUrl = (ownerId: string, videoId: string) => `/api/stenograms/@${ownerId}/${videoId}`;

export function toMetadata(row: StenogramRow): StenogramMetadata {
  return {
    videoId: row.video_id,
    ...(row.title && { title: row.title }),
    ...(row.channel_title && { channelTitle: row.channel_title }),
    channelId: row.channel_id,
    ...(row.language && { language: row.language }),
    tokensUsed: (row.prompt_tokens ?? 0) + (row.completion_tokens ?? 0),
    ...(row.llm_model && { llmModel: row.llm_model }),
    generatedAt: row.generated_at?.toISOString() ?? null,
    status: row.status,
    error: row.error,
    speakers: row.speakers,
    paragraphs: row.paragraphs,
    words: row.words,
    chunks: row.chunks,
    fallbackChunks: row.fallback_chunks,
    bytes: row.bytes,
    sha256: row.content_sha256,
    transcript:
      row.transcript_language && row.transcript_kind && row.transcript_version !== null
        ? { language: row.transcript_language, kind: row.transcript_kind, version: row.transcript_version }
        : null,
    requestedAt: row.requested_at.toISOString(),
    markdownUrl: stenogramUrl(row.owner_id, row.video_id),
    streamUrl: `${stenogramUrl(row.owner_id, row.video_id)}/stream`,
  };
}

/** The owner's stenogram of a video. Every read filters by owner in SQL: nobody else's is ever found. */
export async function findStenogram(sql: Queryable, ownerId: string, videoId: string): Promise<StenogramRow | undefined> {
  const [row] = await sql<StenogramRow[]>`
    select ${sql.unsafe(STENOGRAM_COLUMNS)}
    from ${sql.unsafe(STENOGRAM_SOURCE)}
    where g.owner_id = ${ownerId}::uuid and g.video_id = ${videoId}`;
  return row;
}

export async function readStenogram(sql: Queryable, stenogramId: string): Promise<StenogramRow | undefined> {
  const [row] = await sql<StenogramRow[]>`
    select ${sql.unsafe(STENOGRAM_COLUMNS)}
    from ${sql.unsafe(STENOGRAM_SOURCE)}
    where g.id = ${stenogramId}`;
  return row;
}
