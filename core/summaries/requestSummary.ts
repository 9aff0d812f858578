import type { Sql } from '../db/database.ts';
import { requestGeneration } from '../generations/requestGeneration.ts';
import type { TranscriptInfo } from '../subtitles/transcript.ts';
import { summaryGeneration, type SummaryRequestInput } from './summaryGeneration.ts';
import type { SummaryRow } from './summaryObject.ts';

export type SummaryRequest =
  /** It exists and is generated: nothing was queued or charged. */
  | { outcome: 'generated'; summary: SummaryRow }
  /** A job is writing it: `queued` when this request started that job (and was charged). */
  | { outcome: 'generating'; summary: SummaryRow; queued: boolean }
  /** No transcript to build on: a subtitle fetch is queued (or already running). */
  | { outcome: 'transcript_required'; transcript: TranscriptInfo };

/**
 * POST /api/summary/generate (and MCP generate_summary): a generated summary is answered, a running
 * generation joined (both uncharged); else the lifecycle charges, stores and queues one (requestGeneration).
 */
export async function requestSummary(sql: Sql, input: SummaryRequestInput): Promise<SummaryRequest> {
  const request = await requestGeneration(sql, summaryGeneration, input);
  if (request.outcome === 'transcript_required') return request;
  if (request.row.status === 'generated') return { outcome: 'generated', summary: request.row };
  return { outcome: 'generating', summary: request.row, queued: request.outcome === 'queued' };
}
