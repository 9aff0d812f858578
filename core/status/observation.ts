/**
 * What one probe saw of a video, and how a player response (the watch page's, or innertube's
 * /player answer) reads as one. Only definite answers say "gone"; bot checks, "try again later" and
 * anything unreadable are transient and never change a status.
 */
import { looksLikeBotCheck } from '../sources/http.ts';
import type { KeptAnswer } from '../sources/keptAnswer.ts';
import type { StatusReason } from '../videos/videoStatus.ts';
import { isObject } from '../youtube/json.ts';
import { playabilityMessages } from '../youtube/playerResponse.ts';

type ProbeName = 'youtube_api' | 'watch_page' | 'yt_dlp';

/**
 * When the platform showed it (its answer's Date header); else the time it is recorded. `answer` is
 * what it said, kept as evidence when the observation decides or confirms something.
 */
type Observed = { observedAt?: Date; answer?: KeptAnswer };

export type Observation = Observed &
  (
    | { videoId: string; outcome: 'available'; source: ProbeName; evidence: string }
    | { videoId: string; outcome: 'gone'; reason: StatusReason; claimant?: string; source: ProbeName; evidence: string }
    | { videoId: string; outcome: 'transient'; source: ProbeName; evidence: string }
  );

/** The platform's wording of each reason (English pages: the probe asks for hl=en). */
const REASON_PATTERNS: Array<[RegExp, StatusReason]> = [
  [/account associated with this video has been terminated|account has been terminated/i, 'account_terminated'],
  [/copyright (claim|grounds)|blocked it on copyright/i, 'copyright'],
  [/terms of service|community guidelines|violat(ing|ed) YouTube/i, 'terms_of_service'],
  [/removed by the (uploader|user)/i, 'removed_by_uploader'],
  [/\bprivate video\b|video is private/i, 'private'],
  [/not (made this video )?available in your country|blocked (it )?in your country/i, 'blocked_in_region'],
];
const CLAIMANT = /copyright claim by (.+?)\.?$|contains content from (.+?), who has blocked it/i;
const TRY_AGAIN = /try again later|something went wrong|an error occurred/i;

/** Every message a player response shows about playability, joined. */
function playabilityText(status: Record<string, unknown>): string {
  const { reason, errorReason, errorSubreason, messages } = playabilityMessages(status);
  return [reason, errorReason, errorSubreason, ...messages].filter(Boolean).join(' ');
}

/** What a message of the platform says of a video: gone (and why), or nothing definite. */
export function classifyMessage(text: string): { outcome: 'gone'; reason: StatusReason; claimant?: string } | { outcome: 'transient' } {
  if (!text || looksLikeBotCheck(text) || TRY_AGAIN.test(text)) return { outcome: 'transient' };
  const reason = REASON_PATTERNS.find(([pattern]) => pattern.test(text))?.[1] ?? 'unknown';
  const claim = reason === 'copyright' ? CLAIMANT.exec(text) : null;
  const claimant = claim ? (claim[1] ?? claim[2])?.trim() : undefined;
  return { outcome: 'gone', reason, ...(claimant ? { claimant } : {}) };
}

/** Reads a player response of `videoId` as an observation. */
export function classifyPlayerResponse(videoId: string, player: Record<string, unknown>, evidence: string): Observation {
  const status = isObject(player.playabilityStatus) ? player.playabilityStatus : {};
  const code = typeof status.status === 'string' ? status.status : '';
  const text = playabilityText(status);
  const said = `${code || 'no status'}: ${text || 'no message'} (${evidence})`;
  if (looksLikeBotCheck(text)) return { videoId, outcome: 'transient', source: 'watch_page', evidence: said };
  // Playable, age-gated ("inappropriate for some users") or an upcoming/offline live stream: the video exists.
  if (code === 'OK' || code === 'LIVE_STREAM_OFFLINE' || (code === 'LOGIN_REQUIRED' && !/private/i.test(text))) {
    return { videoId, outcome: 'available', source: 'watch_page', evidence: said };
  }
  const read =
    code === 'ERROR' || code === 'UNPLAYABLE' || code === 'LOGIN_REQUIRED' || code === 'CUSTOM'
      ? classifyMessage(text)
      : ({ outcome: 'transient' } as const);
  return { videoId, ...read, source: 'watch_page', evidence: said };
}
