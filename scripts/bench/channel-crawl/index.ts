/**
 * A full crawl of one 20,000-video channel, end to end, from each local source in turn: the YouTube
 * Data API v3 stand-in (test/kit/servers/youtube-api-server.ts, 50 videos a page) and a yt-dlp
 * archive directory (test/kit/archive-fixture.ts, ARCHIVE_DIR).
 *
 * The API runs in this process (startApi with buildServices(loadConfig(...)), as `afterimage api`
 * wires it) together with the Data API stand-in; the worker runs as `node scripts/bin.mjs worker` in a
 * child process, so its memory is its own (VmHWM from /proc). POST /api/search starts the crawl; the
 * stream is read to search:complete.
 *
 * Afterwards the two halves of a crawl step are replayed alone, in this process, to see where the time
 * goes: the source's pages (a fresh source like the worker's) and the store transactions
 * (upsertVideos + appendEvents, batch by batch, on a fresh database), plus the same store with larger
 * batches as a what-if.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Benchmark, target } from '../lib/harness.ts';
import { crawlOnce } from './crawl.ts';
import { replay } from './replay.ts';
import {
  PRODUCTION_BATCH,
  TARGET_VIDEOS_PER_SECOND,
  VIDEOS,
  WHAT_IF_BATCH,
  WORKER_CONCURRENCY,
  type CrawlRun,
  type Replay,
} from './shape.ts';
import { prepareSource } from './sources.ts';

export const benchmark: Benchmark = {
  name: 'channel-crawl',
  title: `Crawl of a ${VIDEOS.toLocaleString('en')}-video channel`,
  description:
    `A search (POST /api/search) of one channel with ${VIDEOS.toLocaleString('en')} videos, from the local YouTube Data API stand-in and, separately, from a generated yt-dlp archive directory (ARCHIVE_DIR), ` +
    "read over SSE until search:complete: end-to-end time, videos stored per second, time to the first video, crawl jobs, and the worker's peak memory. " +
    `The API runs in the harness process; the worker is \`afterimage worker\` in a child process (WORKER_CONCURRENCY=${WORKER_CONCURRENCY}). Each run has a fresh database; both processes have warmed their sources up (the archive's index) before the search, as a started service has, and the warm-up is reported apart. ` +
    `Target: ≥ ${TARGET_VIDEOS_PER_SECOND.toLocaleString('en')} videos/s stored. The source and store halves of a step are then replayed alone to show where the time goes.`,
  async run(ctx) {
    const problems: string[] = [];
    const runs: CrawlRun[] = [];
    const replays: Replay[] = [];
    const scratch = await mkdtemp(join(tmpdir(), 'afterimage-bench-crawl-'));
    try {
      for (const kind of ['youtube_api', 'archive'] as const) {
        const prepared = await prepareSource(kind, ctx, scratch);
        try {
          const { run, channelId, config } = await crawlOnce(ctx, prepared, problems);
          runs.push(run);
          replays.push(await replay(ctx, kind, config, channelId));
        } finally {
          await prepared.cleanup();
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    return {
      parameters: {
        videos: VIDEOS,
        targetVideosPerSecond: TARGET_VIDEOS_PER_SECOND,
        workerConcurrency: WORKER_CONCURRENCY,
        worker: '`node scripts/bin.mjs worker` (child process)',
        api: 'startApi in the harness process, buildServices(loadConfig(...))',
        sources: {
          youtube_api: 'test/kit/servers/youtube-api-server.ts, 50 videos a page (playlistItems.list + videos.list)',
          archive:
            'test/kit/archive-fixture.ts, default options (8 formats an info.json, media every 4th, subtitles every 3rd), no legacy channel',
        },
        crawlBatch: PRODUCTION_BATCH,
        whatIfBatch: WHAT_IF_BATCH,
      },
      results: { runs, replays },
      targets: runs.map((run) =>
        target(`${run.label}: videos stored per second`, run.videosPerSecond, { atLeast: TARGET_VIDEOS_PER_SECOND }),
      ),
      ok: problems.length === 0,
      problems,
    };
  },
};
