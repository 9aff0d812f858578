/**
 * A full crawl of one 20,000-video channel, `POST /api/search` to `search:complete` on its stream, from each
 * local source in turn: the YouTube Data API v3 stand-in (50 videos a page) and a yt-dlp archive directory.
 * `afterimage api` and `afterimage worker` run as child processes, their sources warmed up first as a
 * started service's are. Target: ≥ 2,000 videos stored per second.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createArchiveFixture } from '../../test/kit/archive-fixture.ts';
import { start as startYoutubeApiServer } from '../../test/kit/servers/youtube-api-server.ts';
import { type BenchContext, type Benchmark, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { type ServiceProcess, startService } from './lib/processes.ts';
import { round } from './lib/stats.ts';
import { createSseParser } from './lib/sse-parse.ts';
import { memoryOf } from './lib/usage.ts';

const VIDEOS = numberKnob('CHANNEL_CRAWL_VIDEOS', 20_000);
const TARGET_VIDEOS_PER_SECOND = 2_000;
const TIMEOUT_MS = 150_000;

interface Source {
  kind: string;
  env: Record<string, string>;
  query: string;
  videos: number;
  cleanup(): Promise<void>;
}

async function prepare(kind: 'youtube_api' | 'archive', scratch: string): Promise<Source> {
  if (kind === 'youtube_api') {
    const server = await startYoutubeApiServer({ apiKey: 'bench-data-api-key' });
    server.createChannel({ channelId: 'UCbenchCrawl20kVideos000', handle: '@benchcrawl20k', title: 'Bench crawl', videoCount: VIDEOS });
    const env = { YOUTUBE_API_KEY: server.apiKey, YOUTUBE_API_URL: server.url, ARCHIVE_DIR: join(scratch, 'no-archive') };
    return { kind, env, query: '@benchcrawl20k', videos: VIDEOS, cleanup: () => server.close() };
  }
  const fixture = await createArchiveFixture({ videos: VIDEOS, root: scratch, legacyChannel: false });
  const env = { YOUTUBE_API_KEY: '', YOUTUBE_API_URL: '', ARCHIVE_DIR: fixture.dir };
  return { kind, env, query: fixture.handle, videos: fixture.allVideoIds.length, cleanup: () => fixture.cleanup() };
}

/** Reads the stream to its end: when the first live video came, and the last search event. */
function follow(url: string, key: string): Promise<{ firstVideoAt: number; final: string }> {
  return new Promise((resolve, reject) => {
    let firstVideoAt = Number.NaN;
    let final = '';
    const request = get(url, { headers: { Accept: 'text/event-stream', 'X-API-Key': key }, agent: false }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`the stream answered ${response.statusCode}`));
      const feed = createSseParser((frame) => {
        if (frame.event === 'search:video' && Number.isNaN(firstVideoAt)) firstVideoAt = performance.now();
        if (frame.event === 'search:complete' || frame.event === 'search:error') final = `${frame.event} ${frame.data.slice(0, 200)}`;
      });
      response.setEncoding('utf8').on('data', feed);
      response.on('end', () => resolve({ firstVideoAt, final }));
      response.on('error', reject);
    });
    request.setTimeout(TIMEOUT_MS, () => request.destroy(new Error(`the stream did not end within ${TIMEOUT_MS / 1000} s`)));
    request.on('error', reject);
  });
}

async function crawl(ctx: BenchContext, source: Source, problems: string[]) {
  const db = await ctx.database();
  const sql = db.pool({ max: 3, role: 'bench' });
  const user = await createUser(sql, { email: `crawl-${source.kind}@example.org`, tier: 'pro', isAdmin: false });
  const { key } = await createApiKey(sql, { userId: user.id });
  await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, channelSearchesPerHour: null } });
  const env = { DATABASE_URL: db.url, DATA_DIR: ctx.dataDir, PORT: '0', HOST: '127.0.0.1', WAYBACK_ENABLED: 'false', ...source.env };
  const services: ServiceProcess[] = [];
  try {
    for (const role of ['worker', 'api'] as const) services.push(await startService(role, env, { waitFor: ['source ready'] }));
    const [worker, api] = services as [ServiceProcess, ServiceProcess];
    const posted = performance.now();
    const response = await fetch(`${api.url}/api/search`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ query: source.query }),
    });
    const body = (await response.json()) as { data?: { sseEndpointUrl: string; channelId: string } };
    if (!body.data) throw new Error(`POST /api/search answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    const stream = await follow(`${api.url}${body.data.sseEndpointUrl}`, key);
    const seconds = (performance.now() - posted) / 1000;
    const [stored] = await sql<{ n: number }[]>`select count(*)::int as n from videos where channel_id = ${body.data.channelId}`;
    if (!stream.final.startsWith('search:complete')) problems.push(`${source.kind}: the stream ended with ${stream.final || 'nothing'}`);
    if (stored!.n !== source.videos) problems.push(`${source.kind}: ${stored!.n} videos stored, expected ${source.videos}`);
    const run = {
      source: source.kind,
      videosStored: stored!.n,
      endToEndSeconds: round(seconds, 2),
      videosPerSecond: Math.round(stored!.n / seconds),
      firstVideoSeconds: round((stream.firstVideoAt - posted) / 1000, 2),
      workerPeakRssMiB: round(memoryOf(worker.pid)?.peakMiB ?? Number.NaN, 1),
    };
    ctx.progress(`${source.kind}: ${run.videosStored} videos in ${run.endToEndSeconds} s (${run.videosPerSecond}/s)`);
    return run;
  } finally {
    for (const service of services) await service.stop();
  }
}

export const benchmark: Benchmark = {
  name: 'channel-crawl',
  title: `Crawl of a ${VIDEOS.toLocaleString('en')}-video channel`,
  description:
    `POST /api/search of one channel with ${VIDEOS.toLocaleString('en')} videos, read over SSE until search:complete, from the local YouTube Data API stand-in and, ` +
    'separately, from a generated yt-dlp archive directory (ARCHIVE_DIR); `afterimage api` and `afterimage worker` (default concurrency) as child processes on a fresh database, ' +
    `their sources warmed up before the search. Target: ≥ ${TARGET_VIDEOS_PER_SECOND.toLocaleString('en')} videos stored per second.`,
  async run(ctx) {
    const problems: string[] = [];
    const runs = [];
    const scratch = await mkdtemp(join(tmpdir(), 'afterimage-bench-crawl-'));
    try {
      for (const kind of ['youtube_api', 'archive'] as const) {
        const source = await prepare(kind, scratch);
        try {
          runs.push(await crawl(ctx, source, problems));
        } finally {
          await source.cleanup();
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    return {
      parameters: { videos: VIDEOS },
      results: { runs },
      targets: runs.map((run) =>
        target(`${run.source}: videos stored per second`, run.videosPerSecond, { atLeast: TARGET_VIDEOS_PER_SECOND }),
      ),
      ok: problems.length === 0,
      problems,
    };
  },
};
