/**
 * The platform's watch pages as YouTube serves them: a 2020s page embedding
 * `var ytInitialPlayerResponse = {...};` shaped like the real player responses (videoDetails,
 * microformat.playerMicroformatRenderer, captions), the player errors of removed and private videos,
 * and the bot check. Written for the stand-ins that answer like the platform: the demo's recorded
 * source (scripts/demo) and the test kit's servers.
 */
import { escapeHtml } from '../text/escapeHtml.ts';

export interface PlayerVideo {
  videoId: string;
  channelId: string;
  title: string;
  description?: string;
  lengthSeconds?: number;
  viewCount?: number;
  keywords?: string[];
  /** YYYY-MM-DD */
  uploadDate?: string;
  author?: string;
  /** "http://www.youtube.com/@name" */
  ownerProfileUrl?: string;
  captions?: Array<{ languageCode: string; kind?: 'asr' }>;
}

/** JSON as YouTube puts it in a script: `<` escaped so no text can close the script. */
export const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** A /player response like the real ones (videoDetails, microformat, captions). */
export function playerResponse(video: PlayerVideo): Record<string, unknown> {
  const thumbs = [
    { url: `https://i.ytimg.com/vi/${video.videoId}/default.jpg`, width: 120, height: 90 },
    { url: `https://i.ytimg.com/vi/${video.videoId}/hqdefault.jpg`, width: 480, height: 360 },
    { url: `https://i.ytimg.com/vi/${video.videoId}/maxresdefault.jpg`, width: 1920, height: 1080 },
  ];
  const date = video.uploadDate ?? '2015-06-01';
  const player: Record<string, unknown> = {
    responseContext: { serviceTrackingParams: [] },
    playabilityStatus: { status: 'OK', playableInEmbed: true, contextParams: 'Q0FFU0FnZ0M=' },
    videoDetails: {
      videoId: video.videoId,
      title: video.title,
      lengthSeconds: String(video.lengthSeconds ?? 253),
      ...(video.keywords ? { keywords: video.keywords } : {}),
      channelId: video.channelId,
      isOwnerViewing: false,
      shortDescription: video.description ?? '',
      isCrawlable: true,
      thumbnail: { thumbnails: thumbs },
      allowRatings: true,
      viewCount: String(video.viewCount ?? 1234),
      author: video.author ?? 'Some Channel',
      isPrivate: false,
      isUnpluggedCorpus: false,
      isLiveContent: false,
    },
    microformat: {
      playerMicroformatRenderer: {
        thumbnail: { thumbnails: [{ url: `https://i.ytimg.com/vi/${video.videoId}/maxresdefault.jpg`, width: 1280, height: 720 }] },
        title: { simpleText: video.title },
        description: { simpleText: video.description ?? '' },
        lengthSeconds: String(video.lengthSeconds ?? 253),
        ownerProfileUrl: video.ownerProfileUrl ?? `http://www.youtube.com/channel/${video.channelId}`,
        externalChannelId: video.channelId,
        isFamilySafe: true,
        isUnlisted: false,
        viewCount: String(video.viewCount ?? 1234),
        category: 'Entertainment',
        publishDate: `${date}T07:00:00-07:00`,
        ownerChannelName: video.author ?? 'Some Channel',
        uploadDate: `${date}T07:00:00-07:00`,
      },
    },
  };
  if (video.captions?.length) {
    player.captions = {
      playerCaptionsTracklistRenderer: {
        captionTracks: video.captions.map((track) => ({
          baseUrl: `https://www.youtube.com/api/timedtext?v=${video.videoId}&lang=${track.languageCode}${track.kind ? '&kind=asr' : ''}`,
          name: { simpleText: track.languageCode },
          vssId: `${track.kind ? 'a' : ''}.${track.languageCode}`,
          languageCode: track.languageCode,
          ...(track.kind ? { kind: track.kind } : {}),
          isTranslatable: true,
        })),
      },
    };
  }
  return player;
}

/** A 2020s watch page around a player response (and optionally ytInitialData), as YouTube served it. */
export function watchPageHtml(player: Record<string, unknown>, options: { initialData?: Record<string, unknown> } = {}): string {
  const details = (player.videoDetails ?? {}) as Record<string, unknown>;
  const title = typeof details.title === 'string' ? details.title : '';
  const id = typeof details.videoId === 'string' ? details.videoId : '';
  const head = title
    ? `<title>${escapeHtml(title)} - YouTube</title><meta name="title" content="${escapeHtml(title)}"><link rel="canonical" href="https://www.youtube.com/watch?v=${id}"><meta property="og:title" content="${escapeHtml(title)}"><meta property="og:url" content="https://www.youtube.com/watch?v=${id}">`
    : '<title> - YouTube</title>';
  const initialData = options.initialData ?? { contents: { twoColumnWatchNextResults: { results: { results: { contents: [] } } } } };
  return `<!DOCTYPE html><html style="font-size: 10px;font-family: Roboto, Arial, sans-serif;" lang="en"><head><meta http-equiv="origin-trial" content="x">${head}<link rel="shortcut icon" href="https://www.youtube.com/s/desktop/favicon.ico"></head><body dir="ltr"><div id="watch7-content" class="watch-main-col"></div><script nonce="n0nce">var ytInitialPlayerResponse = ${scriptJson(player)};var meta = document.createElement('meta'); meta.name = 'referrer'; meta.content = 'origin-when-cross-origin'; document.getElementsByTagName('head')[0].appendChild(meta);</script><div id="player"></div><script nonce="n0nce">var ytInitialData = ${scriptJson(initialData)};</script><script nonce="n0nce">if (window.ytcsi) {window.ytcsi.tick('pdr', null, '');}</script></body></html>`;
}

/** The player error of a removed video on a 2020s watch page. */
export function removalPlayer(reason: string): Record<string, unknown> {
  const isPrivate = /private/i.test(reason);
  return {
    responseContext: { serviceTrackingParams: [] },
    playabilityStatus: isPrivate
      ? {
          status: 'LOGIN_REQUIRED',
          messages: ['This is a private video. Please sign in to verify that you may see it.'],
          errorScreen: {
            playerErrorMessageRenderer: {
              reason: { simpleText: 'Private video' },
              subreason: { runs: [{ text: reason }] },
              icon: { iconType: 'LOCK' },
            },
          },
          contextParams: 'Q0FFU0FnZ0E=',
        }
      : {
          status: 'ERROR',
          reason: 'Video unavailable',
          errorScreen: {
            playerErrorMessageRenderer: {
              reason: { simpleText: 'Video unavailable' },
              thumbnail: { thumbnails: [{ url: '//s.ytimg.com/yts/img/meh7-vflGevej7.png', width: 140, height: 100 }] },
              icon: { iconType: 'ERROR_OUTLINE' },
              subreason: { runs: [{ text: reason }] },
            },
          },
          contextParams: 'Q0FFU0FnZ0E=',
        },
    trackingParams: 'CAAQu2kiEwjJ',
  };
}

/** A bot check ("Sign in to confirm you're not a bot"). */
export function botCheckHtml(): string {
  return watchPageHtml({
    playabilityStatus: {
      status: 'LOGIN_REQUIRED',
      reason: 'Sign in to confirm you’re not a bot',
      errorScreen: { playerErrorMessageRenderer: { reason: { runs: [{ text: 'Sign in to confirm you’re not a bot' }] } } },
    },
  });
}
