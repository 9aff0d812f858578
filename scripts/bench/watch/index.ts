/**
 * Watching at scale: 10,000 watchlists of three channels over 1,000 channels and 100,000 videos, a webhook on every
 * fifth to a local receiver, `afterimage worker` and `afterimage api` as child processes. Deletions confirmed by the
 * worker's own probes against the Data API stand-in: the delay to the watchlist feeds and the receiver. A burst of
 * deletions written at once: deliveries per second and the CPU of each. Feed requests: the API's CPU per request.
 */
import { cpus } from 'node:os';
import { loadConfig } from '../../../core/config.ts';
import { configuredServerKey } from '../../../core/secrets/serverKey.ts';
import { scheduleAllStatusChecks } from '../../../core/status/scheduleChecks.ts';
import { watchlistFeedPath } from '../../../core/watchlists/ownWatchlist.ts';
import { generatedVideoId, start as startYoutubeApiServer } from '../../../test/kit/servers/youtube-api-server.ts';
import { type Benchmark, sleep, target } from '../lib/harness.ts';
import { postmasterPid, type ServiceProcess, startService } from '../lib/processes.ts';
import { distribution, round } from '../lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot } from '../lib/usage.ts';
import {
  BURST,
  CHANNELS,
  CONFIRMED,
  count,
  FEEDS_POLLED,
  fannedOut,
  feedLoad,
  pollFeeds,
  SECRET,
  seed,
  startReceiver,
  until,
  VIDEOS_PER_CHANNEL,
  WATCHLISTS,
  WEBHOOK_EVERY,
} from './world.ts';

export const benchmark: Benchmark = {
  name: 'watch',
  title: `Watching ${CHANNELS.toLocaleString('en')} channels in ${WATCHLISTS.toLocaleString('en')} watchlists`,
  description:
    `${WATCHLISTS.toLocaleString('en')} watchlists of 3 channels over ${CHANNELS.toLocaleString('en')} channels, a webhook on every ${WEBHOOK_EVERY}th. ` +
    `${CONFIRMED} deletions confirmed by the worker's probes: delay to feeds and receiver. ${BURST} deletions at once: deliveries per second. ` +
    'Feed requests: API CPU per request. Targets: p95 ≤ 60 s from the check queued, ≤ 5 s from the confirmation; ≥ 500 deliveries/s; ≤ 2 ms CPU a feed.',
  async run(ctx) {
    const problems: string[] = [];
    const db = await ctx.database();
    // Setting up 100,000 videos (their triggers fire) takes longer than a request's statement may.
    const sql = db.pool({ max: 4, role: 'bench', connection: { statement_timeout: '300000' } });
    const platform = await startYoutubeApiServer({ apiKey: 'bench-watch-key' });
    const receiver = await startReceiver();
    const { arrivals } = receiver;
    const services: ServiceProcess[] = [];
    try {
      const setup = performance.now();
      const channels = Array.from({ length: CHANNELS }, (_, c) => `UCwatchbench${String(c).padStart(12, '0')}`);
      for (const id of channels) platform.createChannel({ channelId: id, title: id, videoCount: VIDEOS_PER_CHANNEL });
      const videos = channels.flatMap((id) => Array.from({ length: VIDEOS_PER_CHANNEL }, (_, i) => generatedVideoId(id, i)));
      const serverKey = await configuredServerKey(loadConfig({ DATA_DIR: ctx.dataDir, SECRET_KEY: SECRET }), sql);
      await seed(sql, channels, videos, receiver.url, serverKey);
      ctx.progress(`stored ${videos.length} videos and ${WATCHLISTS} watchlists in ${Math.round(performance.now() - setup)} ms`);
      const env = {
        ...{ DATABASE_URL: db.url, DATA_DIR: ctx.dataDir, SECRET_KEY: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', STATUS_CONFIRM_MINUTES: '0' },
        ...{ WORKER_CONCURRENCY: '8', YOUTUBE_API_KEY: platform.apiKey, YOUTUBE_API_URL: platform.url, WAYBACK_ENABLED: 'false' },
        ...{ ARCHIVE_DIR: '/nonexistent-afterimage-bench-archive', PORT: '0', HOST: '127.0.0.1' },
      };
      const [worker, api] = [await startService('worker', env), await startService('api', env)];
      services.push(worker, api);

      // Confirmed deletions: one video in each of CONFIRMED channels goes; a first check suspects, a second confirms.
      const gone = Array.from({ length: CONFIRMED }, (_, i) => generatedVideoId(channels[(i * 7) % CHANNELS]!, 1));
      for (const id of gone) platform.setVideoState(id, 'deleted');
      await scheduleAllStatusChecks(sql, { videoIds: gone, priority: 0 });
      await until(async () => (await count(sql, `select count(*) from video_checks where suspected_at is not null`)) >= CONFIRMED);
      const feeds = await sql<{ id: string; feedVersion: number }[]>`
        select distinct on (w.id) w.id::text as id, w.feed_version as "feedVersion" from watchlists w
        join watchlist_items i on i.watchlist_id = w.id join videos v on v.channel_id = i.channel_id and v.video_id = any(${gone})
        limit ${FEEDS_POLLED}`;
      const feedPoll = pollFeeds(api, serverKey, feeds);
      const queuedAt = Date.now();
      await scheduleAllStatusChecks(sql, { videoIds: gone, priority: 0 });
      await until(async () => (await count(sql, `select count(*) from changes where kind = 'video.deleted'`)) >= CONFIRMED);
      await fannedOut(sql);
      const deliveries = await count(sql, `select count(*) from webhook_deliveries`);
      await until(async () => arrivals.deliveries.size >= deliveries);
      await sleep(1_000);
      await feedPoll.stop();
      const logged = await sql<{ id: string; at: number }[]>`
        select id::text, extract(epoch from recorded_at) * 1000 as at from changes where kind = 'video.deleted'`;
      const loggedAt = new Map(logged.map((row) => [row.id, Number(row.at)]));
      const confirmationToReceiverMs = distribution([...arrivals.changes].map(([id, at]) => at - loggedAt.get(id)!));
      const confirmationToFeedMs = distribution([...feedPoll.seen].map(([key, at]) => at - loggedAt.get(key.split(':')[1]!)!));
      const checkQueuedToReceiverMs = distribution([...arrivals.changes.values()].map((at) => at - queuedAt));
      ctx.progress(`${logged.length} deletions confirmed, ${deliveries} deliveries, ${feedPoll.seen.size} feed entries seen`);

      // A burst: BURST deletions written at once, as a run of confirming checks would.
      const before = arrivals.deliveries.size;
      const postmaster = await postmasterPid(sql);
      const cpuAtBurst = { worker: cpuOf(worker.pid) ?? 0, all: cpuSnapshot(postmaster) };
      const burstAt = Date.now();
      await sql`
        update videos set status = 'deleted', status_reason = 'terms_of_service', status_source = 'youtube_api',
          status_evidence = 'This video has been removed for violating YouTube''s Terms of Service.'
        where video_id = any(${videos.filter((_, i) => i % VIDEOS_PER_CHANNEL === 2).slice(0, BURST)})`;
      await fannedOut(sql);
      const fanOutSeconds = round((Date.now() - burstAt) / 1000, 1);
      const burstDeliveries = (await count(sql, `select count(*) from webhook_deliveries`)) - deliveries;
      await until(async () => arrivals.deliveries.size - before >= burstDeliveries).catch(async () => {
        const held =
          await sql`select error, count(*)::int from webhook_attempts where error is not null group by 1 order by 2 desc limit 3`;
        problems.push(`${burstDeliveries - (arrivals.deliveries.size - before)} deliveries missing after 120 s: ${JSON.stringify(held)}`);
      });
      const deliveriesPerSecond = round(
        burstDeliveries / ((Math.max(...[...arrivals.deliveries.values()].slice(before)) - burstAt) / 1000),
        0,
      );
      const burstCpu = cpuDelta(cpuAtBurst.all, cpuSnapshot(postmaster));
      const cpuPerDelivery = {
        workerMs: round(((cpuOf(worker.pid) ?? 0) - cpuAtBurst.worker) / 1000 / burstDeliveries, 3),
        postgresMs: round((burstCpu.postgresUs ?? 0) / 1000 / burstDeliveries, 3),
        receiverMs: round(burstCpu.selfUs / 1000 / burstDeliveries, 3),
        machineBusyShare: round((burstCpu.machineBusyUs ?? 0) / 1e6 / burstCpu.seconds / cpus().length, 2),
      };
      ctx.progress(`${burstDeliveries} deliveries at ${deliveriesPerSecond}/s (fanned out in ${fanOutSeconds} s)`);

      // The API's CPU per feed request: the site-wide feed, a revalidation of it (304), and a watchlist's.
      const site = `${api.url}/feeds/deletions.atom`;
      const etag = (await fetch(site, { headers: { 'accept-encoding': 'identity' } })).headers.get('etag')!;
      const watchlistFeed = api.url + watchlistFeedPath(serverKey, feeds[0]!);
      const feedsLoad = {
        siteFeed: await feedLoad(api, site),
        siteFeed304: await feedLoad(api, site, { 'if-none-match': etag }),
        watchlistFeed: await feedLoad(api, watchlistFeed),
      };
      for (const [name, load] of Object.entries(feedsLoad)) if (load.errors) problems.push(`${name}: ${load.errors} errors`);
      if (arrivals.verified === 0) problems.push('no delivery was verified');
      return {
        parameters: { channels: CHANNELS, videos: videos.length, watchlists: WATCHLISTS, confirmed: CONFIRMED, burst: BURST },
        results: {
          ...{ confirmationToReceiverMs, confirmationToFeedMs, checkQueuedToReceiverMs, deliveries, verified: arrivals.verified },
          ...{ burstDeliveries, deliveriesPerSecond, cpuPerDelivery, fanOutSeconds, feedsLoad },
        },
        targets: [
          target('p95 delay, confirming check queued → receiver (ms)', checkQueuedToReceiverMs.p95, { atMost: 60_000 }),
          target('p95 delay, confirmation written → receiver (ms)', confirmationToReceiverMs.p95, { atMost: 5_000 }),
          target('p95 delay, confirmation written → watchlist feed (ms)', confirmationToFeedMs.p95, { atMost: 5_000 }),
          target('webhook deliveries per second', deliveriesPerSecond, { atLeast: 500 }),
          target('API CPU per feed request (ms)', feedsLoad.siteFeed.cpuMsPerRequest, { atMost: 2 }),
        ],
        ok: problems.length === 0,
        problems,
      };
    } finally {
      for (const service of services.reverse()) await service.stop();
      receiver.close();
      await platform.close();
      await sql.end();
    }
  },
};
