/**
 * The status probes of this deployment: the Data API (videos.list, 50 ids a call) when a key is
 * set, and a probe that tells why a video is gone: the watch page's player response when
 * STATUS_WATCH_PROBE is on, else yt-dlp when YTDLP_PATH is set. Without any, nothing can be
 * verified and videos stay as their sources described them.
 */
import type { Config } from '../config.ts';
import { sourceFetchOptions } from '../sources/configured.ts';
import { withLastAnswer, type KeptAnswer } from '../sources/keptAnswer.ts';
import { fetchText, looksLikeBotCheck, type FetchOptions } from '../sources/http.ts';
import { DefiniteError, TransientError } from '../sources/httpErrors.ts';
import { upstreamFor } from '../sources/upstream.ts';
import { watchPageFetchOptions } from '../sources/watchPageFetch.ts';
import { createYoutubeApiSource } from '../sources/youtubeApi.ts';
import { PAGE_SIZE } from '../sources/youtubeApi/client.ts';
import { findPlayerResponses, isPlayerOf } from '../youtube/playerResponse.ts';
import { execFile } from 'node:child_process';
import { classifyMessage, classifyPlayerResponse, type Observation } from './observation.ts';

export type StatusProbe = (videoIds: string[], signal?: AbortSignal) => Promise<Observation[]>;

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The platform's origins: kept evidence names them, not the configured URLs (which may be internal proxies). */
const DATA_API_ORIGIN = 'https://www.googleapis.com';
const WEB_ORIGIN = 'https://www.youtube.com';

export function dataApiProbe(options: { apiKey: string; baseUrl: string; fetchOptions?: Omit<FetchOptions, 'signal'> }): StatusProbe {
  const api = createYoutubeApiSource(options);
  return async (videoIds, signal) => {
    const observations: Observation[] = [];
    for (let start = 0; start < videoIds.length; start += PAGE_SIZE) {
      const batch = videoIds.slice(start, start + PAGE_SIZE);
      let found: Set<string>;
      let answer: KeptAnswer | undefined;
      try {
        ({ result: found, answer } = await withLastAnswer(DATA_API_ORIGIN, () => api.publicVideoIds(batch, signal)));
      } catch (error) {
        if (!(error instanceof TransientError) && !(error instanceof DefiniteError)) throw error;
        // A refused or failing call says nothing about the videos.
        for (const videoId of batch)
          observations.push({ videoId, outcome: 'transient', source: 'youtube_api', evidence: describeError(error) });
        continue;
      }
      for (const videoId of batch) {
        observations.push(
          found.has(videoId)
            ? { videoId, outcome: 'available', source: 'youtube_api', evidence: 'videos.list returned it', ...(answer ? { answer } : {}) }
            : {
                videoId,
                outcome: 'gone',
                reason: 'unknown',
                source: 'youtube_api',
                evidence: 'videos.list did not return it (deleted, private or blocked)',
                ...(answer ? { answer } : {}),
              },
        );
      }
    }
    return observations;
  };
}

export function watchPageProbe(options: {
  webUrl: string;
  fetchOptions?: Omit<FetchOptions, 'signal' | 'isTransient'>;
  concurrency?: number;
}): StatusProbe {
  const webUrl = options.webUrl.replace(/\/+$/, '');
  const upstream = upstreamFor('youtube_web', [webUrl]);
  const base = watchPageFetchOptions(options.fetchOptions);
  async function probeOne(videoId: string, signal?: AbortSignal): Promise<Observation> {
    const url = `${webUrl}/watch?v=${encodeURIComponent(videoId)}&hl=en`;
    let html: string;
    let answeredAt: Date | undefined;
    let answer: KeptAnswer | undefined;
    try {
      ({
        result: { body: html, answeredAt },
        answer,
      } = await withLastAnswer(WEB_ORIGIN, () => fetchText(upstream, url, signal ? { ...base, signal } : base)));
    } catch (error) {
      if (!(error instanceof TransientError) && !(error instanceof DefiniteError)) throw error;
      // The platform answers gone videos with a 200 page: an error status is a proxy's or an outage's.
      return { videoId, outcome: 'transient', source: 'watch_page', evidence: describeError(error) };
    }
    // Evidence names the platform's page, not YOUTUBE_WEB_URL: that may be an internal proxy clients must not learn of.
    const page = `https://www.youtube.com/watch?v=${encodeURIComponent(videoId)}`;
    const player = findPlayerResponses(html).find((candidate) => isPlayerOf(candidate, videoId));
    if (!player) {
      const why = looksLikeBotCheck(html) ? 'a bot check' : 'no player response';
      return { videoId, outcome: 'transient', source: 'watch_page', evidence: `${why} on ${page}` };
    }
    return {
      ...classifyPlayerResponse(videoId, player, page),
      ...(answeredAt ? { observedAt: answeredAt } : {}),
      ...(answer ? { answer } : {}),
    };
  }
  return inLanes(options.concurrency ?? 4, probeOne);
}

/** Runs `lanes` probes of single videos at a time, keeping the order of `videoIds`. */
function inLanes(lanes: number, probeOne: (videoId: string, signal?: AbortSignal) => Promise<Observation>): StatusProbe {
  return async (videoIds, signal) => {
    const observations: Observation[] = new Array(videoIds.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(lanes, videoIds.length) }, async () => {
        while (next < videoIds.length) {
          const index = next++;
          observations[index] = await probeOne(videoIds[index]!, signal);
        }
      }),
    );
    return observations;
  };
}

/**
 * yt-dlp (YTDLP_PATH) asked for a video's metadata without downloading it: a JSON answer means
 * the video is there; an error line is read like the platform's messages (its "Video unavailable.
 * This video has been removed by the uploader" and the like); bot checks, HTTP 429/5xx, timeouts
 * and anything unclear are transient.
 */
export function ytDlpProbe(options: { command: string; timeoutMs?: number; concurrency?: number }): StatusProbe {
  const timeout = options.timeoutMs ?? 60_000;
  const run = (videoId: string, signal?: AbortSignal) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const url = `https://www.youtube.com/watch?v=${videoId}`;
      execFile(
        options.command,
        ['--skip-download', '--dump-single-json', '--no-playlist', '--no-warnings', '--', url],
        { timeout, maxBuffer: 64 * 1024 * 1024, ...(signal ? { signal } : {}) },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    });
  return inLanes(options.concurrency ?? 2, async (videoId, signal) => {
    const { code, stdout, stderr } = await run(videoId, signal);
    if (code === 0 && stdout.trim().startsWith('{'))
      return { videoId, outcome: 'available', source: 'yt_dlp', evidence: 'yt-dlp read its metadata' };
    const message =
      stderr
        .split('\n')
        .filter((line) => line.startsWith('ERROR:'))
        .at(-1) ?? '';
    const evidence = `yt-dlp exited ${code ?? 'on a signal or timeout'}: ${(message || stderr.trim().split('\n').at(-1) || 'no message').slice(0, 500)}`;
    // Network and throttling failures are not answers about the video.
    if (
      code === null ||
      !message ||
      /HTTP Error (429|5\d\d)|timed out|Unable to download|Connection|getaddrinfo|Temporary failure/i.test(message)
    ) {
      return { videoId, outcome: 'transient', source: 'yt_dlp', evidence };
    }
    return { videoId, ...classifyMessage(message.replace(/^ERROR:\s*(\[[^\]]+\]\s*)?[\w-]{11}:\s*/, '')), source: 'yt_dlp', evidence };
  });
}

/**
 * One observation per video from every configured probe: the Data API's answer stands; for the
 * videos it no longer returns, the reasons probe (the watch page, else yt-dlp) adds why. When
 * they disagree (the API has lost a video the other still finds) the answer is transient, looked
 * at again later.
 */
export function combineProbes(probes: { dataApi?: StatusProbe; reasons?: StatusProbe }): StatusProbe | undefined {
  const { dataApi, reasons } = probes;
  if (!dataApi) return reasons;
  if (!reasons) return dataApi;
  return async (videoIds, signal) => {
    const first = await dataApi(videoIds, signal);
    const gone = first.filter((observation) => observation.outcome === 'gone').map((observation) => observation.videoId);
    const paged = new Map((gone.length ? await reasons(gone, signal) : []).map((observation) => [observation.videoId, observation]));
    return first.map((observation) => {
      const page = paged.get(observation.videoId);
      if (!page || page.outcome === 'transient') return observation;
      if (page.outcome === 'gone') return page;
      return {
        videoId: observation.videoId,
        outcome: 'transient',
        source: 'youtube_api',
        evidence: `${observation.evidence}, but ${page.source} finds it (${page.evidence})`,
      };
    });
  };
}

export function configuredStatusProbe(config: Config): StatusProbe | undefined {
  const fetchOptions = sourceFetchOptions(config);
  return combineProbes({
    ...(config.YOUTUBE_API_KEY
      ? { dataApi: dataApiProbe({ apiKey: config.YOUTUBE_API_KEY, baseUrl: config.YOUTUBE_API_URL, fetchOptions }) }
      : {}),
    ...(config.STATUS_WATCH_PROBE
      ? { reasons: watchPageProbe({ webUrl: config.YOUTUBE_WEB_URL, fetchOptions }) }
      : config.YTDLP_PATH
        ? { reasons: ytDlpProbe({ command: config.YTDLP_PATH }) }
        : {}),
  });
}
