import { DefiniteError, TransientError } from '../sources/httpErrors.ts';
import { RefusedRequest } from '../sources/outboundRequest.ts';

/** A track a source listed but could not read: the other tracks of the video are kept, this is recorded. */
export interface TrackProblem {
  message: string;
  /** Worth trying again later (network, rate limit); a refusal is not. */
  transient: boolean;
}

/**
 * What a failed read of one listed track means: undefined when the track is simply not there (a
 * definite 4xx), a problem when it was refused (outbound rules) or did not answer. An abort and
 * anything that is no HTTP failure is thrown on.
 */
export function trackFailure(error: unknown, track: string, signal?: AbortSignal): TrackProblem | undefined {
  if (signal?.aborted) throw error;
  if (error instanceof RefusedRequest) return { message: `${track}: ${error.message}`, transient: false };
  if (error instanceof DefiniteError) return undefined;
  if (error instanceof TransientError) return { message: `${track}: ${error.message}`, transient: true };
  throw error;
}
