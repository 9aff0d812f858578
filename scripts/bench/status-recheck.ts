/**
 * A full status recheck of 1,000,000 stored videos: every video scheduled as `afterimage refresh` does (50 a
 * job), then probed by `afterimage worker` in a child process against the local YouTube Data API stand-in
 * (videos.list, 50 ids a call) until no check is left; 1 % of the videos are gone on the platform.
 */
import type { Sql } from '../../core/db/database.ts';
import { scheduleAllStatusChecks } from '../../core/status/scheduleChecks.ts';
import { generatedVideoId, start as startYoutubeApiServer } from '../../test/kit/servers/youtube-api-server.ts';
import { type Benchmark, sleep, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { postmasterPid, startService } from './lib/processes.ts';
import { round } from './lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot } from './lib/usage.ts';

const CHANNELS = numberKnob('STATUS_RECHECK_CHANNELS', 1_000);
const VIDEOS_PER_CHANNEL = 1_000;
const VIDEOS = CHANNELS * VIDEOS_PER_CHANNEL;
const GONE_EVERY = 100;
const WORKER_CONCURRENCY = 8;
const TARGET_CHECKS_PER_SECOND = 1_000;
const TIMEOUT_MS = 30 * 60_000;

const channelId = (index: number) => `UCstatusbench${String(index).padStart(11, '0')}`;

/** Until no check_status job is left but failed ones; throws when the worker exits or time runs out. */
async function drained(sql: Sql, exited: () => boolean, progress: (message: string) => void): Promise<void> {
  const started = performance.now();
  for (let polls = 1; ; polls++) {
    if (exited()) throw new Error('the worker exited');
    if (performance.now() - started > TIMEOUT_MS) throw new Error(`checks were still queued after ${TIMEOUT_MS / 60_000} minutes`);
    await sleep(250);
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'check_status' and j.attempts < j.max_attempts`;
    if (row!.n === 0) return;
    if (polls % 40 === 0) progress(`${row!.n} jobs left after ${Math.round((performance.now() - started) / 1000)} s`);
  }
}

export const benchmark: Benchmark = {
  name: 'status-recheck',
  title: `Full status recheck of ${VIDEOS.toLocaleString('en')} videos`,
  description:
    `${VIDEOS.toLocaleString('en')} stored videos (${CHANNELS} channels × ${VIDEOS_PER_CHANNEL}) all scheduled for a status check as \`afterimage refresh\` does, ` +
    `then probed by \`afterimage worker\` (WORKER_CONCURRENCY=${WORKER_CONCURRENCY}, a child process) against the local YouTube Data API stand-in until no check is left; ` +
    `1 in ${GONE_EVERY} videos is gone on the platform. Target: ≥ ${TARGET_CHECKS_PER_SECOND.toLocaleString('en')} checks/s, scheduling included.`,
  async run(ctx) {
    const db = await ctx.database();
    const sql = db.pool({ max: 4, role: 'bench' });
    const server = await startYoutubeApiServer({ apiKey: 'bench-status-key' });
    let worker: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      const channels = Array.from({ length: CHANNELS }, (_, c) => channelId(c));
      for (const id of channels) server.createChannel({ channelId: id, title: id, videoCount: VIDEOS_PER_CHANNEL });
      await sql`insert into channels (channel_id, title) select id, id from unnest(${channels}::text[]) as x(id)`;
      for (let c = 0; c < CHANNELS; c += 50) {
        const ids = channels
          .slice(c, c + 50)
          .flatMap((id) => Array.from({ length: VIDEOS_PER_CHANNEL }, (_, i) => generatedVideoId(id, i)));
        const owners = ids.map((_, i) => channels[c + Math.floor(i / VIDEOS_PER_CHANNEL)]!);
        // Stored live, as a crawl from the Data API leaves them (the history trigger writes their first row).
        await sql`
          insert into videos (video_id, channel_id, title, duration_seconds, upload_date, status, status_source)
          select id, channel, 'Video ' || id, 60 + n % 3600, date '2015-01-01' + (n % 3000)::int, 'live', 'youtube_api'
          from unnest(${ids}::text[], ${owners}::text[]) with ordinality as x(id, channel, n)`;
        ids.forEach((id, i) => i % GONE_EVERY === 0 && server.setVideoState(id, 'deleted'));
      }
      await sql`vacuum analyze videos`;
      await sql`vacuum analyze video_status_history`;
      ctx.progress(`${VIDEOS.toLocaleString('en')} videos stored`);

      worker = await startService('worker', {
        DATABASE_URL: db.url,
        DATA_DIR: ctx.dataDir,
        WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
        YOUTUBE_API_KEY: server.apiKey,
        YOUTUBE_API_URL: server.url,
        ARCHIVE_DIR: '/nonexistent-afterimage-bench-archive',
        WAYBACK_ENABLED: 'false',
      });
      const postmaster = await postmasterPid(sql);
      const cpuStart = cpuSnapshot(postmaster);
      const workerCpuStart = cpuOf(worker.pid)!;
      const started = performance.now();
      // While the worker already takes the first jobs, as with `afterimage refresh`.
      const queued = await scheduleAllStatusChecks(sql, {});
      ctx.progress(`scheduled ${queued.videos.toLocaleString('en')} checks in ${queued.jobs} jobs`);
      await drained(sql, () => worker!.exited() !== undefined, ctx.progress);
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuDelta(cpuStart, cpuSnapshot(postmaster));
      const perThousand = (us: number | null) => (us === null ? null : round(us / 1000 / (VIDEOS / 1000), 1));
      const [checked] = await sql<{ n: number }[]>`select count(*)::int as n from video_checks where checked_at is not null`;
      const checksPerSecond = Math.round(VIDEOS / seconds);
      ctx.progress(`${VIDEOS.toLocaleString('en')} checks in ${round(seconds, 1)} s = ${checksPerSecond}/s`);
      return {
        parameters: { videos: VIDEOS, channels: CHANNELS, goneEvery: GONE_EVERY, workerConcurrency: WORKER_CONCURRENCY },
        results: {
          seconds: round(seconds, 1),
          checksPerSecond,
          cpuMsPer1000Checks: { postgres: perThousand(cpu.postgresUs), worker: perThousand(cpuOf(worker.pid)! - workerCpuStart) },
          dataApiCalls: server.counts(),
        },
        targets: [target('checks per second, scheduling included', checksPerSecond, { atLeast: TARGET_CHECKS_PER_SECOND })],
        ok: checked!.n === VIDEOS,
        problems: checked!.n === VIDEOS ? [] : [`${checked!.n} videos were checked, expected ${VIDEOS}`],
      };
    } finally {
      await worker?.stop();
      await server.close();
    }
  },
};
