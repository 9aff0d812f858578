/**
 * `afterimage refresh` and `afterimage backfill`: operators forcing status checks and crawls now,
 * instead of waiting for the crontab. Both queue jobs (the workers run them) and follow them with
 * a progress bar; when no worker runs, the work stays queued and the command says so.
 */
import type { Sql } from '../../core/db/database.ts';
import { crawlProgress } from '../../core/crawl/searchSession.ts';
import { resolveChannel, startSearch } from '../../core/crawl/startSearch.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { configuredStatusProbe } from '../../core/status/probes.ts';
import { scheduleAllStatusChecks } from '../../core/status/scheduleChecks.ts';
import { HEARTBEAT_STALE_SECONDS } from '../../core/workerHeartbeat.ts';
import { CHANNEL_ID, parseChannelQuery, VIDEO_ID } from '../../core/youtube/channelQuery.ts';
import { output, parseOptions, UsageError, withDatabase } from '../cli.ts';
import { progressBar } from '../progress.ts';
import { chooseDatabase, DATABASE_CHOICE, dataDirOption } from '../serviceDatabase.ts';

const REFRESH_USAGE = `usage: npx afterimage refresh [--channel UC…]... [--video ID]... [--no-wait] [--data-dir DIR] [--json]
checks the status of these videos now (default: every video due) and waits for the checks (--no-wait: only queues them).
Needs a status probe: YOUTUBE_API_KEY, STATUS_WATCH_PROBE=true or YTDLP_PATH. ${DATABASE_CHOICE}`;

const BACKFILL_USAGE = `usage: npx afterimage backfill <@handle | channel URL | UC… | video URL>... [--no-wait] [--data-dir DIR] [--json]
crawls these channels now from every source, then checks their videos. ${DATABASE_CHOICE}`;

const POLL_MS = 500;
/** How long a command waits for a worker to show up before leaving its work queued. */
const WORKER_GRACE_MS = 15_000;

async function workerRunning(sql: Sql): Promise<boolean> {
  const [row] =
    await sql`select 1 from worker_heartbeats where last_seen_at > now() - make_interval(secs => ${HEARTBEAT_STALE_SECONDS}) limit 1`;
  return Boolean(row);
}

/** Waits until these jobs are gone (done) or out of attempts (failed), with progress; false when no worker ran them. */
async function followJobs(sql: Sql, jobIds: string[], label: string): Promise<{ finished: boolean; failed: number }> {
  const bar = progressBar(label);
  const started = Date.now();
  for (;;) {
    const [row] = await sql<{ open: number; failed: number }[]>`
      select count(*) filter (where attempts < max_attempts)::int as open, count(*) filter (where attempts >= max_attempts)::int as failed
      from graphile_worker.jobs where id = any(${jobIds}::bigint[])`;
    const done = jobIds.length - row!.open;
    bar.update(done, jobIds.length, row!.failed ? `${row!.failed} failed` : '');
    if (row!.open === 0) {
      bar.done(`${jobIds.length} jobs, ${row!.failed} failed`);
      return { finished: true, failed: row!.failed };
    }
    if (done === 0 && Date.now() - started > WORKER_GRACE_MS && !(await workerRunning(sql))) return { finished: false, failed: 0 };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const NO_WORKER = 'no worker is running: the work stays queued and runs when `npx afterimage start` or `npx afterimage worker` runs';

/** `afterimage refresh [--channel UC…]… [--video ID]… [--no-wait]`: checks the status of these videos (or of every video due) now. */
export async function refreshCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(
    args,
    {
      channel: { type: 'string', multiple: true },
      video: { type: 'string', multiple: true },
      'no-wait': { type: 'boolean' },
      ...dataDirOption,
    },
    { usage: REFRESH_USAGE },
  );
  const channels = values.channel ?? [];
  const videos = values.video ?? [];
  for (const channel of channels)
    if (!CHANNEL_ID.test(channel)) throw new UsageError(`--channel ${channel}: expected a channel id (UC followed by 22 characters)`);
  for (const video of videos) if (!VIDEO_ID.test(video)) throw new UsageError(`--video ${video}: expected an 11-character video id`);
  const { config } = await chooseDatabase(values['data-dir']);
  // Queued without a probe, the checks would end "done" having checked nothing.
  if (!configuredStatusProbe(config))
    throw new UsageError(
      'no status probe is configured, so nothing can check a video: set YOUTUBE_API_KEY (the Data API), STATUS_WATCH_PROBE=true (watch pages) or YTDLP_PATH (yt-dlp), for this command and the workers, then run it again',
    );
  const result = await withDatabase(
    async (db) => {
      const selections = [
        ...(videos.length ? [{ videoIds: videos }] : []),
        ...(channels.length ? [{ channelIds: channels }] : []),
        ...(videos.length || channels.length ? [] : [{}]),
      ];
      const jobIds: string[] = [];
      let queuedVideos = 0;
      const queueing = progressBar('queueing');
      for (const selection of selections) {
        const queued = await scheduleAllStatusChecks(db.sql, { ...selection, priority: 0 }, (sofar) =>
          queueing.update(queuedVideos + sofar.videos, undefined, 'videos'),
        );
        jobIds.push(...queued.jobIds);
        queuedVideos += queued.videos;
      }
      queueing.done(`${queuedVideos} videos in ${jobIds.length} jobs`);
      if (videos.length) {
        const known = await db.sql<{ videoId: string }[]>`select video_id as "videoId" from videos where video_id = any(${videos})`;
        const missing = videos.filter((id) => !known.some((row) => row.videoId === id));
        if (missing.length)
          process.stderr.write(`not stored, skipped: ${missing.join(', ')} (a channel search or backfill stores a channel's videos)\n`);
      }
      const followed = values['no-wait'] || jobIds.length === 0 ? undefined : await followJobs(db.sql, jobIds, 'checking');
      const [summary] = await db.sql<{ live: number; deleted: number; reuploaded: number; checking: number }[]>`
      select count(*) filter (where status = 'live')::int as live, count(*) filter (where status = 'deleted')::int as deleted,
        count(*) filter (where status = 're-uploaded')::int as reuploaded, count(*) filter (where status = 'checking')::int as checking
      from videos where ${videos.length || channels.length ? db.sql`video_id = any(${videos}) or channel_id = any(${channels})` : db.sql`true`}`;
      return {
        videos: queuedVideos,
        jobs: jobIds.length,
        finished: followed?.finished ?? false,
        failedJobs: followed?.failed ?? 0,
        statuses: summary!,
      };
    },
    { config },
  );
  output(values.json, result, () =>
    [
      `queued status checks of ${result.videos} videos in ${result.jobs} jobs`,
      result.jobs && !values['no-wait'] && !result.finished ? NO_WORKER : '',
      `now: ${result.statuses.live} live, ${result.statuses.deleted} deleted, ${result.statuses.reuploaded} re-uploaded, ${result.statuses.checking} not verified`,
    ]
      .filter(Boolean)
      .join('\n'),
  );
}

/**
 * `afterimage backfill <channel or handle>… [--no-wait]`: finds every video of these channels from
 * every configured source (a full crawl each, joined when one runs), then checks their status.
 */
export async function backfillCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseOptions(
    args,
    { 'no-wait': { type: 'boolean' }, ...dataDirOption },
    { usage: BACKFILL_USAGE, positionals: true },
  );
  if (positionals.length === 0) throw new UsageError(BACKFILL_USAGE);
  const queries = positionals.map((text) => {
    const query = parseChannelQuery(text);
    if (!query) throw new UsageError(`"${text}" is not a channel handle, channel URL, channel id or video reference`);
    return { text, query };
  });
  const { config } = await chooseDatabase(values['data-dir']);
  const results = await withDatabase(
    async (db, log) => {
      const { sources } = await buildServices(config, { sql: db.sql, log });
      const done: Array<{ query: string; channelId: string | null; title?: string; videos: number; crawl: string; statusJobs: number }> =
        [];
      for (const { text, query } of queries) {
        const channel = await resolveChannel(db.sql, sources, query, log, config.SOURCE_WAIT_BUDGET_MS);
        if (!channel) {
          process.stderr.write(`${text}: no source knows this channel; skipped\n`);
          done.push({ query: text, channelId: null, videos: 0, crawl: 'not found', statusJobs: 0 });
          continue;
        }
        const started = await startSearch(db.sql, { userId: null, channel, query: text, kind: 'full' });
        let crawl = 'queued';
        if (!values['no-wait']) crawl = await followCrawl(db.sql, started.crawlId, `${text}: crawling`);
        const queued = await scheduleAllStatusChecks(db.sql, { channelIds: [channel.channelId], priority: 5 });
        const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from videos where channel_id = ${channel.channelId}`;
        done.push({
          query: text,
          channelId: channel.channelId,
          ...(channel.title ? { title: channel.title } : {}),
          videos: count!.n,
          crawl,
          statusJobs: queued.jobs,
        });
      }
      return done;
    },
    { config },
  );
  output(values.json, { channels: results }, () =>
    results
      .map((result) =>
        result.channelId
          ? `${result.query}: ${result.channelId}${result.title ? ` (${result.title})` : ''}, ${result.videos} videos stored, crawl ${result.crawl}, ${result.statusJobs} status-check jobs queued`
          : `${result.query}: not found`,
      )
      .concat(results.some((result) => result.crawl === 'queued') ? [NO_WORKER] : [])
      .join('\n'),
  );
  if (results.some((result) => result.channelId === null)) process.exitCode = 1;
}

/** Follows a crawl until it ends, showing the videos it stored; 'queued' when no worker takes it. */
async function followCrawl(sql: Sql, crawlId: string, label: string): Promise<string> {
  const bar = progressBar(label);
  const started = Date.now();
  for (;;) {
    const crawl = await crawlProgress(sql, crawlId);
    bar.update(crawl!.videos, undefined, `videos, ${crawl!.steps} steps`);
    if (crawl!.status !== 'running') {
      bar.done(`${crawl!.status}: ${crawl!.videos} videos`);
      return crawl!.status;
    }
    if (crawl!.steps === 0 && Date.now() - started > WORKER_GRACE_MS && !(await workerRunning(sql))) return 'queued';
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
