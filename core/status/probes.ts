/**
 * The status probes of this deployment: the Data API (videos.list, 50 ids a call) when a key is
 * set, and the watch page's player response when STATUS_WATCH_PROBE is on. The Data API tells
 * whether a video is public; the watch page tells why it is not. Without either, nothing can be
 * verified and videos stay as their sources described them.
 */
import type { Config } from '../config.ts';
import { DefiniteError, TransientError, fetchText, looksLikeBotCheck, type FetchOptions } from '../sources/http.ts';
import { findPlayerResponses } from '../sources/waybackParse.ts';
import { createYoutubeApiSource, PAGE_SIZE } from '../sources/youtubeApi.ts';
import { watchPageFetchOptions } from '../sources/youtubeCaptions.ts';
import { classifyPlayerResponse, type Observation } from './observation.ts';

export type StatusProbe = (videoIds: string[], signal?: AbortSignal) => Promise<Observation[]>;

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function dataApiProbe(options: { apiKey: string; baseUrl: string; fetchOptions?: Omit<FetchOptions, 'signal'> }): StatusProbe {
  const api = createYoutubeApiSource(options);
  return async (videoIds, signal) => {
    const observations: Observation[] = [];
    for (let start = 0; start < videoIds.length; start += PAGE_SIZE) {
      const batch = videoIds.slice(start, start + PAGE_SIZE);
      let found: Set<string>;
      try {
        found = await api.publicVideoIds(batch, signal);
      } catch (error) {
        if (!(error instanceof TransientError) && !(error instanceof DefiniteError)) throw error;
        // A refused or failing call says nothing about the videos.
        for (const videoId of batch) observations.push({ videoId, outcome: 'transient', source: 'youtube_api', evidence: describeError(error) });
        continue;
      }
      for (const videoId of batch) {
        observations.push(
          found.has(videoId)
            ? { videoId, outcome: 'available', source: 'youtube_api', evidence: 'videos.list returned it' }
            : { videoId, outcome: 'gone', reason: 'unknown', source: 'youtube_api', evidence: 'videos.list did not return it (deleted, private or blocked)' },
        );
      }
    }
    return observations;
  };
}

export function watchPageProbe(options: { webUrl: string; fetchOptions?: Omit<FetchOptions, 'signal' | 'isTransient'>; concurrency?: number }): StatusProbe {
  const webUrl = options.webUrl.replace(/\/+$/, '');
  const base = watchPageFetchOptions(options.fetchOptions);
  async function probeOne(videoId: string, signal?: AbortSignal): Promise<Observation> {
    const url = `${webUrl}/watch?v=${encodeURIComponent(videoId)}&hl=en`;
    let html: string;
    try {
      ({ body: html } = await fetchText(url, signal ? { ...base, signal } : base));
    } catch (error) {
      if (!(error instanceof TransientError) && !(error instanceof DefiniteError)) throw error;
      // The platform answers gone videos with a 200 page: an error status is a proxy's or an outage's.
      return { videoId, outcome: 'transient', source: 'watch_page', evidence: describeError(error) };
    }
    const player = findPlayerResponses(html).find((candidate) => {
      const details = candidate.videoDetails as { videoId?: unknown } | undefined;
      return details?.videoId === undefined || details.videoId === videoId;
    });
    if (!player) {
      const why = looksLikeBotCheck(html) ? 'a bot check' : 'no player response';
      return { videoId, outcome: 'transient', source: 'watch_page', evidence: `${why} on ${url}` };
    }
    return classifyPlayerResponse(videoId, player, url);
  }
  const concurrency = options.concurrency ?? 4;
  return async (videoIds, signal) => {
    const observations: Observation[] = new Array(videoIds.length);
    let next = 0;
    const lanes = Array.from({ length: Math.min(concurrency, videoIds.length) }, async () => {
      while (next < videoIds.length) {
        const index = next++;
        observations[index] = await probeOne(videoIds[index]!, signal);
      }
    });
    await Promise.all(lanes);
    return observations;
  };
}

/**
 * One observation per video from every configured probe: the Data API's answer stands; for the
 * videos it no longer returns, the watch page adds the reason. When they disagree (the API has lost
 * a video its page still plays) the answer is transient, looked at again later.
 */
export function combineProbes(probes: { dataApi?: StatusProbe; watchPage?: StatusProbe }): StatusProbe | undefined {
  const { dataApi, watchPage } = probes;
  if (!dataApi) return watchPage;
  if (!watchPage) return dataApi;
  return async (videoIds, signal) => {
    const first = await dataApi(videoIds, signal);
    const gone = first.filter((observation) => observation.outcome === 'gone').map((observation) => observation.videoId);
    const paged = new Map((gone.length ? await watchPage(gone, signal) : []).map((observation) => [observation.videoId, observation]));
    return first.map((observation) => {
      const page = paged.get(observation.videoId);
      if (!page || page.outcome === 'transient') return observation;
      if (page.outcome === 'gone') return page;
      return { videoId: observation.videoId, outcome: 'transient', source: 'youtube_api', evidence: `${observation.evidence}, but its watch page plays it (${page.evidence})` };
    });
  };
}

export function configuredStatusProbe(config: Config): StatusProbe | undefined {
  const fetchOptions = { timeoutMs: config.SOURCE_TIMEOUT_MS };
  return combineProbes({
    ...(config.YOUTUBE_API_KEY ? { dataApi: dataApiProbe({ apiKey: config.YOUTUBE_API_KEY, baseUrl: config.YOUTUBE_API_URL, fetchOptions }) } : {}),
    ...(config.STATUS_WATCH_PROBE ? { watchPage: watchPageProbe({ webUrl: config.YOUTUBE_WEB_URL, fetchOptions }) } : {}),
  });
}
