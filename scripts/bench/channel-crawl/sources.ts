import { get } from 'node:http';
import { join } from 'node:path';
import { createArchiveFixture } from '../../../test/kit/archive-fixture.ts';
import { start as startYoutubeApiServer } from '../../../test/kit/servers/youtube-api-server.ts';
import type { BenchContext } from '../lib/harness.ts';
import { round } from '../lib/stats.ts';
import { createSseParser } from '../lib/sse-parse.ts';
import { CHANNEL_HANDLE, CHANNEL_ID, VIDEOS, type SourceKind } from './shape.ts';

export async function readStreamUntilDone(url: string, key: string, timeoutMs: number, onFirstVideo: () => void) {
  return new Promise<{ status: number; videos: Set<string>; final: string; finalData: string; progress: number }>((resolve, reject) => {
    const videos = new Set<string>();
    let progress = 0;
    let first = true;
    const request = get(url, { headers: { Accept: 'text/event-stream', 'X-API-Key': key }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        resolve({ status: response.statusCode ?? 0, videos, final: '', finalData: '', progress });
        return;
      }
      response.setEncoding('utf8');
      let final = '';
      let finalData = '';
      const feed = createSseParser((frame) => {
        if (frame.event === 'search:video' && frame.id?.startsWith('c:')) {
          if (first) {
            first = false;
            onFirstVideo();
          }
          videos.add(frame.id);
        } else if (frame.event === 'search:progress') progress++;
        else if (frame.event === 'search:complete' || frame.event === 'search:error') {
          final = frame.event;
          finalData = frame.data;
        }
      });
      response.on('data', feed);
      response.on('end', () => resolve({ status: 200, videos, final, finalData, progress }));
      response.on('error', reject);
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`the stream did not end within ${timeoutMs / 1000} s`)));
    request.on('error', reject);
  });
}

export interface PreparedSource {
  kind: SourceKind;
  label: string;
  env: Record<string, string>;
  query: string;
  videosExpected: number;
  setupMs: number;
  requests(): Record<string, number> | null;
  cleanup(): Promise<void>;
}

export async function prepareSource(kind: SourceKind, ctx: BenchContext, scratch: string): Promise<PreparedSource> {
  const started = performance.now();
  if (kind === 'youtube_api') {
    const server = await startYoutubeApiServer({ apiKey: 'bench-data-api-key' });
    server.createChannel({ channelId: CHANNEL_ID, handle: CHANNEL_HANDLE, title: 'Bench crawl 20k', videoCount: VIDEOS });
    ctx.progress(`Data API stand-in at ${server.url} with one channel of ${VIDEOS} videos`);
    const emptyArchive = join(scratch, 'no-archive');
    return {
      kind,
      label: 'YouTube Data API (local stand-in)',
      env: { YOUTUBE_API_KEY: server.apiKey, YOUTUBE_API_URL: server.url, ARCHIVE_DIR: emptyArchive },
      query: CHANNEL_HANDLE,
      videosExpected: VIDEOS,
      setupMs: performance.now() - started,
      requests: () => server.counts(),
      cleanup: () => server.close(),
    };
  }
  const fixture = await createArchiveFixture({ videos: VIDEOS, root: scratch, legacyChannel: false });
  ctx.progress(
    `archive directory of ${fixture.allVideoIds.length} videos (${VIDEOS} info.json + ${fixture.flatOnlyVideoIds.length} flat-playlist only) in ${round(fixture.elapsedMs / 1000, 1)} s`,
  );
  return {
    kind,
    label: 'yt-dlp archive directory (ARCHIVE_DIR)',
    env: { YOUTUBE_API_KEY: '', ARCHIVE_DIR: fixture.dir },
    query: fixture.handle,
    videosExpected: fixture.allVideoIds.length,
    setupMs: performance.now() - started,
    requests: () => null,
    cleanup: () => fixture.cleanup(),
  };
}
