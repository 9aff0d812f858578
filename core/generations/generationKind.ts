/**
 * What each kind of generation (a summary, a stenogram, …) registers with the lifecycle of this
 * folder: its table, its stream's events, its quota unit, and the SQL that is its own (which row a
 * request means, the columns it stores). The lifecycle (request → job → progress → result → refund)
 * is written once, in requestGeneration and runGenerationJob.
 */
import { z } from 'zod';
import type { Queryable } from '../db/database.ts';
import type { EventDefinition, TypedEvent } from '../events/defineEvent.ts';
import type { LimitName } from '../schemas.ts';

/** Every generation's statuses: a job is writing it; its result is stored; it failed (`error` says why; a new request starts over). */
const generationStatuses = ['generating', 'generated', 'failed'] as const;
export type GenerationStatus = (typeof generationStatuses)[number];
export const generationStatus = z
  .enum(generationStatuses)
  .describe('generating: a job is writing it; generated: done; failed: error says why (generate again)');

/** Progress as every kind reports it (its progress event's payload, and the row's `progress` column). */
export interface GenerationProgress {
  stage: string;
  percent: number;
  chunk?: number;
  of?: number;
}

/** The columns the lifecycle reads of any generation's row. */
export interface GenerationRow {
  id: string;
  video_id: string;
  status: GenerationStatus;
  progress: GenerationProgress | null;
}

/** Where a charge went (per key or per user, as its limit counts), so that a failed generation can give it back. */
export interface Charge {
  subject: string;
  windowStart: Date;
}

/** What the job does when it fails, common to every kind: the payload of its `<kind>:error` event. */
export const generationError = z
  .object({
    code: z.string().describe('TRANSCRIPT_REQUIRED: the transcript went away; INTERNAL_ERROR: the generator (or the store) failed'),
    message: z.string(),
    refunded: z.boolean().describe('the quota unit of the generation was given back'),
  })
  .describe('the generation failed (last event)');

export interface GenerationKind<Row extends GenerationRow, Input> {
  /** The stream (`<name>:<id>`) and the job key. */
  name: string;
  /** Its table: id, video_id, status, error, progress, charged_subject, charged_window_start, requested_at, updated_at (migration 027). */
  table: 'summaries' | 'stenograms';
  /** The quota unit a request is charged, refunded when the generation fails. */
  unit: LimitName;
  events: {
    progress: EventDefinition;
    error: EventDefinition<string, typeof generationError>;
    /** The types that end the stream. */
    final: readonly string[];
  };
  read(sql: Queryable, id: string): Promise<Row | undefined>;
  /** The row a request means, locked (for update) until the request's transaction ends. */
  lockExisting(tx: Queryable, input: Input): Promise<{ id: string; status: GenerationStatus } | undefined>;
  /** A new row, generating; undefined when a concurrent request stored it first (`on conflict do nothing` on the kind's unique index). */
  insert(tx: Queryable, input: Input): Promise<string | undefined>;
  /** The kind's own columns of a failed row that starts over (the lifecycle resets the common ones). */
  restart(tx: Queryable, id: string, input: Input): Promise<void>;
  /** Queues the generation's job (the kind's task of core/jobs/registry.ts). */
  enqueueJob(tx: Queryable, id: string, options: { jobKey: string; maxAttempts: number }): Promise<unknown>;
  /** The stream's first event, appended with the request. */
  firstEvent(row: Row): TypedEvent;
}
