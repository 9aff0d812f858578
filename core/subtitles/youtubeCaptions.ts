/**
 * The platform's own caption tracks: the watch page's player response lists them
 * (captions.playerCaptionsTracklistRenderer.captionTracks, each with a signed timedtext baseUrl),
 * and each is read from timedtext as json3. Used only when YOUTUBE_CAPTIONS=true.
 *
 * Every call goes through fetchText (timeouts, retries with backoff, the web upstream's origins
 * only). A bot check or "try again later" is transient (the fetch job retries later); a missing
 * page or track is simply no track. Timedtext URLs on youtube.com are fetched from the configured
 * web URL (a proxy or a test server); a track on any other host is refused, recorded as a problem,
 * and the video's other tracks are read all the same.
 */
import { fetchText, looksLikeBotCheck, type FetchOptions } from '../sources/http.ts';
import { withLastAnswer, type KeptAnswer } from '../sources/keptAnswer.ts';
import { DefiniteError, TransientError } from '../sources/httpErrors.ts';
import { RefusedRequest } from '../sources/outboundRequest.ts';
import { upstreamFor } from '../sources/upstream.ts';
import { watchPageFetchOptions } from '../sources/watchPageFetch.ts';
import { isObject } from '../youtube/json.ts';
import { findPlayerResponses, formattedText, isPlayerOf, playabilityMessages } from '../youtube/playerResponse.ts';
import { captionTrackOf } from '../youtube/captionTrack.ts';
import { trackFailure, type TrackProblem } from './trackFailure.ts';

export interface CaptionTrackRef {
  /** A BCP 47 tag. */
  language: string;
  /** The id of a named track (vssId `.en.uYU-mmqFLq8`), else null. */
  trackId: string | null;
  kind: 'manual' | 'auto';
  /** Where the track is read (json3), on the configured web URL. */
  url: string;
  /** The same without the signature parameters, as provenance. */
  publicUrl: string;
  name?: string;
}

export interface FetchedCaption {
  language: string;
  trackId: string | null;
  kind: 'manual' | 'auto';
  text: string;
  bytes: number;
  url: string;
  /** The answer as evidence keeps it: on the platform's own origin, without the signature parameters. */
  answer?: KeptAnswer;
}

/** Kept answers name the platform, not YOUTUBE_WEB_URL (which may be a proxy nobody outside should learn of). */
const PLATFORM_ORIGIN = 'https://www.youtube.com';
const onPlatform = (url: string) => {
  const { pathname, search } = new URL(url);
  return new URL(`${pathname}${search}`, PLATFORM_ORIGIN).href;
};

export interface YoutubeCaptionsOptions {
  /** Default https://www.youtube.com; tests point it at a local server. */
  webUrl?: string;
  fetchOptions?: Omit<FetchOptions, 'signal' | 'isTransient'>;
  /** Tracks read per video at most (default 20). */
  maxTracks?: number;
}

/** The caption tracks a watch page's player response lists (the player of this video only). */
function captionTracksOf(
  html: string,
  videoId: string,
  webUrl: string,
): { tracks: CaptionTrackRef[]; botCheck: boolean; playable: boolean } {
  const base = new URL(webUrl);
  const players = findPlayerResponses(html).filter((player) => isPlayerOf(player, videoId));
  let botCheck = false;
  let playable = false;
  const tracks: CaptionTrackRef[] = [];
  const seen = new Set<string>();
  for (const player of players) {
    const status = isObject(player.playabilityStatus) ? player.playabilityStatus : {};
    const { reason, errorReason } = playabilityMessages(status);
    const reasons = `${reason ?? ''} ${errorReason ?? ''}`;
    if (looksLikeBotCheck(reasons)) botCheck = true;
    if (status.status === 'OK' || isObject(player.videoDetails)) playable = true;
    const list =
      isObject(player.captions) && isObject(player.captions.playerCaptionsTracklistRenderer)
        ? player.captions.playerCaptionsTracklistRenderer.captionTracks
        : undefined;
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      if (!isObject(entry) || typeof entry.baseUrl !== 'string') continue;
      const track = captionTrackOf(entry);
      if (!track || typeof entry.languageCode !== 'string') continue;
      const { kind } = track;
      const key = `${kind}:${track.language}:${track.trackId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      let url: URL;
      try {
        url = new URL(entry.baseUrl, base);
      } catch {
        continue;
      }
      if (/(^|\.)youtube\.com$/i.test(url.hostname)) url = new URL(`${url.pathname}${url.search}`, base);
      url.searchParams.set('fmt', 'json3');
      const publicUrl = new URL('/api/timedtext', base);
      publicUrl.searchParams.set('v', videoId);
      publicUrl.searchParams.set('lang', entry.languageCode);
      if (kind === 'auto') publicUrl.searchParams.set('kind', 'asr');
      const name = formattedText(entry.name);
      tracks.push({
        language: track.language,
        trackId: track.trackId,
        kind,
        url: url.toString(),
        publicUrl: publicUrl.toString(),
        ...(name ? { name } : {}),
      });
    }
  }
  return { tracks, botCheck, playable };
}

export function createYoutubeCaptionsSource(options: YoutubeCaptionsOptions = {}) {
  const webUrl = (options.webUrl ?? 'https://www.youtube.com').replace(/\/+$/, '');
  const maxTracks = options.maxTracks ?? 20;
  const upstream = upstreamFor('youtube_web', [webUrl]);
  const base = watchPageFetchOptions(options.fetchOptions);
  const withSignal = (signal?: AbortSignal): FetchOptions => (signal ? { ...base, signal } : base);

  /** The tracks the watch page lists; [] when the page is gone. */
  async function listTracks(videoId: string, signal?: AbortSignal): Promise<CaptionTrackRef[]> {
    let html: string;
    try {
      ({ body: html } = await fetchText(upstream, `${webUrl}/watch?v=${encodeURIComponent(videoId)}&hl=en`, withSignal(signal)));
    } catch (error) {
      // A refusal (the page redirected off the web upstream's origins) is no answer about the tracks.
      if (error instanceof DefiniteError && !(error instanceof RefusedRequest)) return [];
      throw error;
    }
    const { tracks, botCheck, playable } = captionTracksOf(html, videoId, webUrl);
    if (botCheck || (!playable && looksLikeBotCheck(html)))
      throw new TransientError(`${new URL(webUrl).host}: the watch page of ${videoId} is a bot check`);
    return tracks;
  }

  /** Every listed track's json3 text; tracks that answer 4xx or nothing are left out, tracks refused or unreachable are problems. */
  async function fetchCaptions(videoId: string, signal?: AbortSignal): Promise<{ captions: FetchedCaption[]; problems: TrackProblem[] }> {
    const tracks = (await listTracks(videoId, signal)).slice(0, maxTracks);
    const captions: FetchedCaption[] = [];
    const problems: TrackProblem[] = [];
    for (const track of tracks) {
      let body: string;
      let answer: KeptAnswer | undefined;
      try {
        ({
          result: { body },
          answer,
        } = await withLastAnswer(PLATFORM_ORIGIN, () => fetchText(upstream, track.url, withSignal(signal))));
      } catch (error) {
        const problem = trackFailure(error, `${track.language} (${track.kind})`, signal);
        if (problem) problems.push(problem);
        continue;
      }
      if (!body.trim()) continue; // timedtext answers an empty 200 when it will not serve the track
      captions.push({
        language: track.language,
        trackId: track.trackId,
        kind: track.kind,
        text: body,
        bytes: Buffer.byteLength(body),
        url: track.publicUrl,
        ...(answer ? { answer: { ...answer, url: onPlatform(track.publicUrl) } } : {}),
      });
    }
    return { captions, problems };
  }

  return { name: 'youtube' as const, listTracks, fetchCaptions };
}
