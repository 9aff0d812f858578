/**
 * A full status recheck of 1,000,000 stored videos: every video scheduled (as
 * `afterimage refresh` does, 50 a job, in chunks of 20,000), then probed by `afterimage worker` in a child process
 * against the local YouTube Data API stand-in (videos.list, 50 ids a call), until the queue is
 * empty. Measures checks/s end to end, the database's CPU per 1,000 checks, and the history table
 * before and after the cycle. 1 % of the videos are gone on the platform: their first "gone" is a
 * suspicion (no history row until a second probe confirms it).
 */
import type { Sql } from '../../core/db/database.ts';
import { scheduleAllStatusChecks } from '../../core/status/scheduleChecks.ts';
import { start as startYoutubeApiServer, generatedVideoId } from '../../test/kit/servers/youtube-api-server.ts';
import { type Benchmark, sleep, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { postmasterPid, startService } from './lib/processes.ts';
import { round } from './lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf } from './lib/usage.ts';

/** STATUS_RECHECK_CHANNELS runs it smaller (1,000 videos a channel). */
const CHANNELS = numberKnob('STATUS_RECHECK_CHANNELS', 1_000);
const VIDEOS_PER_CHANNEL = 1_000;
const VIDEOS = CHANNELS * VIDEOS_PER_CHANNEL;
const GONE_EVERY = 100;
const WORKER_CONCURRENCY = 8;
const TARGET_CHECKS_PER_SECOND = 1_000;
const INSERT_BATCH = 50_000;
const TIMEOUT_MS = 30 * 60_000;

const channelId = (index: number) => `UCstatusbench${String(index).padStart(11, '0')}`;

interface TableSize {
  rows: number;
  totalMiB: number;
}

export const benchmark: Benchmark = {
  name: 'status-recheck',
  title: `Full status recheck of ${VIDEOS.toLocaleString('en')} videos`,
  description:
    `${VIDEOS.toLocaleString('en')} stored videos (${CHANNELS} channels × ${VIDEOS_PER_CHANNEL}) are all scheduled for a status check (check_status jobs of 50, a transaction per 20,000 videos, as \`afterimage refresh\` does), ` +
    `then \`afterimage worker\` (WORKER_CONCURRENCY=${WORKER_CONCURRENCY}, a child process) probes them against the local YouTube Data API stand-in (videos.list, 50 ids a call) and records what it saw, until no check_status job is left. ` +
    `1 in ${GONE_EVERY} videos is gone on the platform. Target: ≥ ${TARGET_CHECKS_PER_SECOND.toLocaleString('en')} checks/s.`,
  async run(ctx) {
    const problems: string[] = [];
    const db = await ctx.database();
    const sql = db.pool({ max: 4, role: 'bench' });
    const server = await startYoutubeApiServer({ apiKey: 'bench-status-key' });
    let worker: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      const setupStarted = performance.now();
      for (let c = 0; c < CHANNELS; c++)
        server.createChannel({ channelId: channelId(c), title: `Status bench ${c}`, videoCount: VIDEOS_PER_CHANNEL });
      ctx.progress(`Data API stand-in with ${VIDEOS.toLocaleString('en')} videos in ${Math.round(performance.now() - setupStarted)} ms`);

      const loadStarted = performance.now();
      await sql`insert into channels (channel_id, title) select * from unnest(${Array.from({ length: CHANNELS }, (_, c) => channelId(c))}::text[], ${Array.from({ length: CHANNELS }, (_, c) => `Status bench ${c}`)}::text[])`;
      const ids: string[] = [];
      for (let c = 0; c < CHANNELS; c++) for (let i = 0; i < VIDEOS_PER_CHANNEL; i++) ids.push(generatedVideoId(channelId(c), i));
      for (let offset = 0; offset < VIDEOS; offset += INSERT_BATCH) {
        const batch = ids.slice(offset, offset + INSERT_BATCH);
        const channels = batch.map((_, index) => channelId(Math.floor((offset + index) / VIDEOS_PER_CHANNEL)));
        // Stored live, as a crawl from the Data API leaves them (the history trigger writes their first row).
        await sql`
          insert into videos (video_id, channel_id, title, duration_seconds, upload_date, status, status_source)
          select id, channel, 'Video ' || id, 60 + n % 3600, date '2015-01-01' + (n % 3000)::int, 'live', 'youtube_api'
          from unnest(${batch}::text[], ${channels}::text[]) with ordinality as x(id, channel, n)`;
      }
      await sql`vacuum analyze videos`;
      await sql`vacuum analyze video_status_history`;
      const loadMs = performance.now() - loadStarted;
      let gone = 0;
      for (let index = 0; index < VIDEOS; index += GONE_EVERY) {
        server.setVideoState(ids[index]!, 'deleted');
        gone++;
      }
      ctx.progress(`stored ${VIDEOS.toLocaleString('en')} videos in ${Math.round(loadMs)} ms; ${gone} of them gone on the platform`);

      const historyBefore = await tableSize(sql, 'video_status_history');
      const videosBefore = await tableSize(sql, 'videos');

      const env = {
        DATABASE_URL: db.url,
        DATA_DIR: ctx.dataDir,
        WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
        YOUTUBE_API_KEY: server.apiKey,
        YOUTUBE_API_URL: server.url,
        ARCHIVE_DIR: '/nonexistent-afterimage-bench-archive',
        WAYBACK_ENABLED: 'false',
      };
      worker = await startService('worker', env);
      const postmaster = await postmasterPid(sql);

      const cpuStart = cpuSnapshot(postmaster);
      const workerCpuStart = cpuOf(worker.pid);
      const scheduleStarted = performance.now();
      // As `afterimage refresh` does: every video, a transaction per chunk, while the worker already takes the first jobs.
      const queued = await scheduleAllStatusChecks(sql, {});
      const scheduleMs = performance.now() - scheduleStarted;
      ctx.progress(`scheduled ${queued.videos.toLocaleString('en')} checks in ${queued.jobs} jobs in ${Math.round(scheduleMs)} ms`);

      const waitFor = (tasks: string[], since: number, label: string) =>
        waitForJobs(
          sql,
          tasks,
          () => (worker!.exited() ? worker!.tail() : false),
          since,
          (done) => ctx.progress(`${label}: ${done}`),
        );
      problems.push(...(await waitFor(['check_status'], scheduleStarted, 'checks')));
      const runMs = performance.now() - scheduleStarted;
      const cpu = cpuDelta(cpuStart, cpuSnapshot(postmaster));
      const workerCpuUs = (cpuOf(worker.pid) ?? 0) - (workerCpuStart ?? 0);
      const workerMemory = memoryOf(worker.pid);

      const [outcome] = await sql<{ checked: number; live: number; suspected: number; deleted: number; failedJobs: number }[]>`
        select count(*) filter (where checked_at is not null)::int as checked, count(*) filter (where status = 'live')::int as live,
          count(*) filter (where suspected_at is not null)::int as suspected, count(*) filter (where status = 'deleted')::int as deleted,
          (select count(*) from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
            where t.identifier = 'check_status' and j.attempts >= j.max_attempts)::int as "failedJobs"
        from videos join video_checks using (video_id)`;
      if (outcome!.checked !== VIDEOS) problems.push(`${outcome!.checked} videos were checked, expected ${VIDEOS}`);
      if (outcome!.suspected !== gone) problems.push(`${outcome!.suspected} videos are suspected gone, expected ${gone}`);
      if (outcome!.deleted !== 0) problems.push(`${outcome!.deleted} videos were marked deleted without a confirming second probe`);
      await sql`vacuum analyze video_status_history`;
      const historyAfter = await tableSize(sql, 'video_status_history');
      const videosAfter = await tableSize(sql, 'videos');

      // The confirming look, as if an hour had passed: the suspected videos are probed again, recorded
      // deleted (a history row each), and searched for re-uploads (none exist: every title is unique).
      await sql`update video_checks set suspected_at = suspected_at - interval '61 minutes' where suspected_at is not null`;
      const suspectedIds = (await sql<{ id: string }[]>`select video_id as id from video_checks where suspected_at is not null`).map(
        (row) => row.id,
      );
      const confirmStarted = performance.now();
      await scheduleAllStatusChecks(sql, { videoIds: suspectedIds });
      problems.push(...(await waitFor(['check_status', 'link_reuploads'], confirmStarted, 'confirmations')));
      const confirmMs = performance.now() - confirmStarted;
      const [confirmed] = await sql<{ deleted: number; reuploaded: number }[]>`
        select count(*) filter (where status = 'deleted')::int as deleted, count(*) filter (where status = 're-uploaded')::int as reuploaded from videos`;
      if (confirmed!.deleted !== gone)
        problems.push(`${confirmed!.deleted} videos are deleted after the confirming probe, expected ${gone}`);
      if (confirmed!.reuploaded !== 0) problems.push(`${confirmed!.reuploaded} videos were linked to re-uploads that do not exist`);
      await sql`vacuum analyze video_status_history`;
      const historyConfirmed = await tableSize(sql, 'video_status_history');

      const checksPerSecond = VIDEOS / (runMs / 1000);
      const pgMsPer1000 = cpu.postgresUs === null ? null : cpu.postgresUs / 1000 / (VIDEOS / 1000);
      const workerMsPer1000 = workerCpuUs / 1000 / (VIDEOS / 1000);
      const results = {
        videos: VIDEOS,
        goneOnPlatform: gone,
        loadMs: Math.round(loadMs),
        scheduleMs: Math.round(scheduleMs),
        jobs: queued.jobs,
        queuedByCrontab: VIDEOS - queued.videos,
        runSeconds: round(runMs / 1000, 1),
        checksPerSecond: Math.round(checksPerSecond),
        targetMet: checksPerSecond >= TARGET_CHECKS_PER_SECOND,
        postgresCpuMsPer1000Checks: pgMsPer1000 === null ? null : round(pgMsPer1000, 1),
        workerCpuMsPer1000Checks: round(workerMsPer1000, 1),
        harnessCpuMsPer1000Checks: round(cpu.selfUs / 1000 / (VIDEOS / 1000), 1),
        machineBusyCores: cpu.machineBusyUs === null ? null : round(cpu.machineBusyUs / 1e6 / cpu.seconds, 2),
        workerPeakRssMiB: round(workerMemory?.peakMiB ?? Number.NaN, 0),
        outcome,
        dataApiCalls: server.counts(),
        historyBefore,
        historyAfter,
        confirmation: {
          videos: suspectedIds.length,
          seconds: round(confirmMs / 1000, 1),
          deleted: confirmed!.deleted,
          history: historyConfirmed,
        },
        videosTableBefore: videosBefore,
        videosTableAfter: videosAfter,
      };
      ctx.progress(`${VIDEOS.toLocaleString('en')} checks in ${results.runSeconds} s = ${results.checksPerSecond}/s`);
      return {
        parameters: {
          videos: VIDEOS,
          channels: CHANNELS,
          goneEvery: GONE_EVERY,
          workerConcurrency: WORKER_CONCURRENCY,
          batch: 50,
          confirmMinutes: 60,
          server: 'test/kit/servers/youtube-api-server.ts in this process',
        },
        results,
        targets: [target('checks per second, scheduling included', results.checksPerSecond, { atLeast: TARGET_CHECKS_PER_SECOND })],
        ok: problems.length === 0,
        problems,
      };
    } finally {
      await worker?.stop();
      await server.close();
      await sql.end({ timeout: 5 });
    }
  },
};

/** Waits until no job of these tasks is left (or only failed ones); the problems met, if any. */
async function waitForJobs(
  sql: Sql,
  tasks: string[],
  exited: () => string | false,
  since: number,
  report: (done: string) => void,
): Promise<string[]> {
  let lastReport = performance.now();
  for (;;) {
    if (performance.now() - since > TIMEOUT_MS)
      return [`jobs of ${tasks.join(', ')} were still queued after ${TIMEOUT_MS / 60_000} minutes`];
    const tail = exited();
    if (tail) return [`the worker exited: ${tail}`];
    await sleep(250);
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = any(${tasks}) and j.attempts < j.max_attempts`;
    if (row!.n === 0) return [];
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      report(`${row!.n} jobs left after ${Math.round((performance.now() - since) / 1000)} s`);
    }
  }
}

async function tableSize(sql: Sql, table: string): Promise<TableSize> {
  const [row] = await sql<{ rows: number; bytes: number }[]>`
    select (select count(*) from ${sql(table)})::int as rows, pg_total_relation_size(${table}::regclass)::float8 as bytes`;
  return { rows: row!.rows, totalMiB: round(row!.bytes / 2 ** 20, 1)! };
}
