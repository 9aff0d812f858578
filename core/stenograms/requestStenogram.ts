import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { requestGeneration } from '../generations/requestGeneration.ts';
import type { TranscriptInfo } from '../subtitles/transcript.ts';
import { stenogramUrl, type StenogramRow } from './metadata.ts';
import { stenogramGeneration, type StenogramRequestInput } from './stenogramGeneration.ts';

export type StenogramRequest =
  | { outcome: 'accepted'; stenogram: StenogramRow }
  | { outcome: 'transcript_required'; transcript: TranscriptInfo };

/**
 * POST /api/stenograms/:videoId/generate (and MCP generate_stenogram): a second stenogram of the same
 * video is refused (409 STENOGRAM_CONFLICT); else the lifecycle charges, stores and queues one
 * (requestGeneration; a failed one starts over).
 */
export async function requestStenogram(sql: Sql, input: StenogramRequestInput): Promise<StenogramRequest> {
  const request = await requestGeneration(sql, stenogramGeneration, input);
  if (request.outcome === 'existing') throw conflict(request.row);
  return request.outcome === 'queued' ? { outcome: 'accepted', stenogram: request.row } : request;
}

function conflict(existing: StenogramRow): AppError {
  const url = stenogramUrl(existing.owner_id, existing.video_id);
  return new AppError(
    'STENOGRAM_CONFLICT',
    existing.status === 'generating'
      ? `a stenogram of ${existing.video_id} is being generated for you: follow GET ${url}/stream (it resumes with Last-Event-ID)`
      : `you already have a stenogram of ${existing.video_id}: GET ${url}; DELETE it first to generate it again`,
    { details: { status: existing.status, url } },
  );
}
