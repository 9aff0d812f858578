/**
 * The demo's stand-in for the platform: a local HTTP server answering `/watch?v=<id>` with the
 * watch page the platform served for that video in the current round of a recording (the videos'
 * fates, scripts/demo/writeArchive.ts): the player response of a playable video, the player error
 * of a removed or private one, or a bot check. The status probe reads it as it reads the platform
 * (STATUS_WATCH_PROBE with YOUTUBE_WEB_URL pointing here), so every status the demo shows was
 * observed by the same code as a real one. Each answer carries the recording's time in its Date
 * header (recordedAt: months or years after the upload, a week between rounds), which the probe
 * dates its observation by: the deletions spread over the years the videos span.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { botCheckHtml, playerResponse, removalPlayer, watchPageHtml } from '../../core/youtube/watchPageHtml.ts';
import type { DemoVideo, Fate } from './writeArchive.ts';

/** Rounds of observation the recording holds; a fate's change happens at the last. */
export const ROUNDS = 3;
/** The recording's rounds are this far apart (from each video's first look, DemoVideo.recordedFrom). */
const ROUND_DAYS = 7;
const UNAVAILABLE = 'This video is unavailable';

/** What the platform showed of a video in a round: its player, a removal message, or a bot check. */
function answerOf(fate: Fate, round: number): 'playable' | 'bot-check' | { removed: string } {
  const last = round === ROUNDS - 1;
  switch (fate.kind) {
    case 'live':
      return 'playable';
    case 'unreachable':
      return 'bot-check';
    case 'gone':
      return { removed: fate.message };
    case 'gone-then-why':
      return { removed: last ? fate.message : UNAVAILABLE };
    case 'reinstated':
      return last ? 'playable' : { removed: fate.message };
  }
}

/** When the recording's round `round` looked at the video (epoch seconds). */
function recordedAt(video: DemoVideo, round: number): number {
  return video.recordedFrom + round * ROUND_DAYS * 86_400;
}

export interface RecordedPlatform {
  /** Where the watch pages are (YOUTUBE_WEB_URL). */
  url: string;
  /** Plays round `round` (0-based) of the recording from now on. */
  play(round: number): void;
  /** Watch pages served so far. */
  readonly served: number;
  close(): Promise<void>;
}

export async function startRecordedPlatform(videos: readonly DemoVideo[]): Promise<RecordedPlatform> {
  const byId = new Map(videos.map((video) => [video.videoId, video]));
  let round = 0;
  let served = 0;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://platform.invalid');
    const video = byId.get(url.searchParams.get('v') ?? '');
    if (url.pathname !== '/watch' || request.method !== 'GET') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found');
      return;
    }
    served++;
    const answer = video ? answerOf(video.fate, round) : { removed: UNAVAILABLE };
    const html =
      answer === 'bot-check'
        ? botCheckHtml()
        : answer === 'playable'
          ? watchPageHtml(
              playerResponse({
                videoId: video!.videoId,
                channelId: video!.channelId,
                title: video!.title,
                lengthSeconds: video!.durationSeconds,
                uploadDate: video!.uploadDate,
                author: video!.channelTitle,
              }),
            )
          : watchPageHtml(removalPlayer(answer.removed));
    const headers: Record<string, string> = { 'Content-Type': 'text/html; charset=utf-8' };
    if (video) headers.Date = new Date(recordedAt(video, round) * 1000).toUTCString();
    response.writeHead(200, headers).end(html);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    play(next) {
      round = next;
    },
    get served() {
      return served;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
