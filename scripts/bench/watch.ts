/**
 * Watching at scale: 10,000 watchlists (1,000 users × 10, three channels each) over 1,000 channels and
 * 100,000 videos, a webhook on every fifth watchlist to a local receiver. Deletions are made on the
 * Data API stand-in and confirmed by `afterimage worker`'s own probes (a suspicion, then the confirming
 * check); the delay is read from the change's logging to its entry in watchlist feeds (polled over HTTP
 * from `afterimage api`) and to the receiver, and from the confirming checks' queueing. Then a burst of
 * deletions written at once measures deliveries per second, and a load of feed requests the API's CPU.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { cpus } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { configuredServerKey } from '../../core/secrets/serverKey.ts';
import { scheduleAllStatusChecks } from '../../core/status/scheduleChecks.ts';
import { watchlistFeedPath } from '../../core/watchlists/ownWatchlist.ts';
import { generatedVideoId, start as startYoutubeApiServer } from '../../test/kit/servers/youtube-api-server.ts';
import { type Benchmark, sleep, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { runLoad } from './lib/load.ts';
import { postmasterPid, startService } from './lib/processes.ts';
import { distribution, round } from './lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot } from './lib/usage.ts';

/** WATCH_CHANNELS runs it smaller (100 videos, 30 watchers a channel). */
const CHANNELS = numberKnob('WATCH_CHANNELS', 1_000);
const VIDEOS_PER_CHANNEL = 100;
const WATCHLISTS = CHANNELS * 10;
const CHANNELS_PER_WATCHLIST = 3;
const WEBHOOK_EVERY = 5;
const CONFIRMED = 100;
const BURST = 1_000;
const FEEDS_POLLED = 20;
const SECRET = 'bench-watch-secret-key-of-32-characters-or-more';
const channelId = (c: number) => `UCwatchbench${String(c).padStart(12, '0')}`;

export const benchmark: Benchmark = {
  name: 'watch',
  title: `Watching ${CHANNELS.toLocaleString('en')} channels in ${WATCHLISTS.toLocaleString('en')} watchlists`,
  description:
    `${WATCHLISTS.toLocaleString('en')} watchlists of ${CHANNELS_PER_WATCHLIST} channels over ${CHANNELS.toLocaleString('en')} channels and ${(CHANNELS * VIDEOS_PER_CHANNEL).toLocaleString('en')} videos, a webhook on every ${WEBHOOK_EVERY}th to a local receiver. ` +
    `${CONFIRMED} deletions confirmed by the worker's probes against the Data API stand-in: delay to the watchlist feeds and the receiver. ` +
    `Then ${BURST.toLocaleString('en')} deletions at once: deliveries per second. Then feed requests: the API's CPU per request. ` +
    'Targets: p95 ≤ 60 s from the confirming check queued, ≤ 5 s from the confirmation written; ≥ 500 deliveries/s; ≤ 2 ms CPU per feed request.',
  async run(ctx) {
    const problems: string[] = [];
    const db = await ctx.database();
    // Setting up 100,000 videos (their triggers fire) takes longer than a request's statement may.
    const sql = db.pool({ max: 4, role: 'bench', connection: { statement_timeout: '300000' } });
    const platform = await startYoutubeApiServer({ apiKey: 'bench-watch-key' });
    const received = new Map<string, number>();
    let verified = 0;
    const receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = Date.now();
        const body = Buffer.concat(chunks).toString('utf8');
        // One delivery in 50 is verified as a receiver would: the signature over id.timestamp.body.
        if (received.size % 50 === 0) webhook.verify(body, req.headers as Record<string, string>) && verified++;
        received.set(req.headers['webhook-id'] as string, at);
        const changeId = (JSON.parse(body) as { data: { id: string } }).data.id;
        receivedChange.set(changeId, Math.min(receivedChange.get(changeId) ?? at, at));
        res.writeHead(204).end();
      });
    });
    const receivedChange = new Map<string, number>();
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const services: Array<{ stop(): Promise<void> }> = [];
    const secret = `whsec_${Buffer.from('bench-watch-signing-secret!!').toString('base64')}`;
    const webhook = new Webhook(secret);
    try {
      const setup = performance.now();
      const channels = Array.from({ length: CHANNELS }, (_, c) => channelId(c));
      for (const id of channels) platform.createChannel({ channelId: id, title: id, videoCount: VIDEOS_PER_CHANNEL });
      await sql`insert into channels (channel_id, title) select id, id from unnest(${channels}::text[]) as id`;
      const videos = channels.flatMap((id) => Array.from({ length: VIDEOS_PER_CHANNEL }, (_, i) => generatedVideoId(id, i)));
      await sql`
        insert into videos (video_id, channel_id, title, upload_date, status, status_source)
        select v, (${channels}::text[])[1 + ((n - 1) / ${VIDEOS_PER_CHANNEL})::int], 'Video ' || v, date '2020-01-01', 'live', 'youtube_api'
        from unnest(${videos}::text[]) with ordinality as x(v, n)`;
      const config = loadConfig({ DATA_DIR: ctx.dataDir, SECRET_KEY: SECRET });
      const serverKey = await configuredServerKey(config, sql);
      await sql`insert into users (email, tier) select 'watcher' || n || '@bench.localhost', 'pro' from generate_series(1, ${WATCHLISTS / 10}) n`;
      await sql`
        insert into watchlists (owner_id, name)
        select u.id, 'List ' || n from (select id, row_number() over (order by id) as r from users) u, generate_series(1, 10) n`;
      await sql`
        insert into watchlist_items (watchlist_id, kind, channel_id, created_at)
        select w.id, 'channel', (${channels}::text[])[1 + (w.r * 7 + k * 331) % ${CHANNELS}], now() - interval '1 day'
        from (select id, row_number() over (order by id) as r from watchlists) w, generate_series(0, ${CHANNELS_PER_WATCHLIST - 1}) k
        on conflict do nothing`;
      await sql`
        insert into webhook_endpoints (watchlist_id, url, secret_sealed)
        select id, ${receiverUrl} || '/' || r, ${serverKey.seal(secret)}
        from (select id, row_number() over (order by id) as r from watchlists) w where abs(hashtext(id::text)) % ${WEBHOOK_EVERY} = 0`;
      // The feeds' readers all come from this one address here: its page requests are not limited.
      await sql`update tier_limits set max_count = null where tier = 'anonymous' and limit_name = 'pageRequestsPerMinute'`;
      await sql`vacuum analyze`;
      ctx.progress(
        `stored ${videos.length.toLocaleString('en')} videos and ${WATCHLISTS.toLocaleString('en')} watchlists in ${Math.round(performance.now() - setup)} ms`,
      );

      const env = {
        DATABASE_URL: db.url,
        DATA_DIR: ctx.dataDir,
        SECRET_KEY: SECRET,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        STATUS_CONFIRM_MINUTES: '0',
        WORKER_CONCURRENCY: '8',
        YOUTUBE_API_KEY: platform.apiKey,
        YOUTUBE_API_URL: platform.url,
        ARCHIVE_DIR: '/nonexistent-afterimage-bench-archive',
        WAYBACK_ENABLED: 'false',
        PORT: '0',
        HOST: '127.0.0.1',
      };
      const worker = await startService('worker', env);
      services.push(worker);
      const api = await startService('api', env);
      services.push(api);

      // Confirmed deletions: one video in each of CONFIRMED channels goes; a first check suspects, a second confirms.
      const gone = Array.from({ length: CONFIRMED }, (_, i) => generatedVideoId(channels[(i * 7) % CHANNELS]!, 1));
      for (const id of gone) platform.setVideoState(id, 'deleted');
      await scheduleAllStatusChecks(sql, { videoIds: gone, priority: 0 });
      await until(async () => (await count(sql, `select count(*) from video_checks where suspected_at is not null`)) >= CONFIRMED, 120_000);
      const feeds = await sql<{ id: string; feedVersion: number }[]>`
        select distinct on (w.id) w.id::text as id, w.feed_version as "feedVersion" from watchlists w
        join watchlist_items i on i.watchlist_id = w.id
        join videos v on v.channel_id = i.channel_id and v.video_id = any(${gone}) limit ${FEEDS_POLLED}`;
      const feedSeen = new Map<string, number>();
      let polling = true;
      const poller = (async () => {
        while (polling) {
          for (const feed of feeds) {
            // A kept-alive connection the API closed meanwhile is reset: the next poll asks again.
            const xml = await fetch(api.url + watchlistFeedPath(serverKey, feed)).then(
              (answer) => answer.text(),
              () => '',
            );
            const at = Date.now();
            for (const [, id] of xml.matchAll(/:change:(\d+)</g))
              if (!feedSeen.has(`${feed.id}:${id}`)) feedSeen.set(`${feed.id}:${id}`, at);
          }
          await sleep(100);
        }
      })();
      const queuedAt = Date.now();
      await scheduleAllStatusChecks(sql, { videoIds: gone, priority: 0 });
      await until(async () => (await count(sql, `select count(*) from changes where kind = 'video.deleted'`)) >= CONFIRMED, 120_000);
      await fannedOut(sql);
      const expected = await count(sql, `select count(*) from webhook_deliveries`);
      await until(async () => received.size >= expected, 120_000);
      await sleep(1_000);
      polling = false;
      await poller;
      const logged = await sql<{ id: string; at: number }[]>`
        select id::text, extract(epoch from recorded_at) * 1000 as at from changes where kind = 'video.deleted'`;
      const loggedAt = new Map(logged.map((row) => [row.id, Number(row.at)]));
      const toReceiver = [...receivedChange].map(([id, at]) => at - loggedAt.get(id)!);
      const toFeed = [...feedSeen].map(([key, at]) => at - loggedAt.get(key.split(':')[1]!)!);
      const fromQueued = [...receivedChange.values()].map((at) => at - queuedAt);
      ctx.progress(`${logged.length} deletions confirmed, ${received.size} deliveries, ${feedSeen.size} feed entries seen`);

      // A burst: BURST deletions written at once, as a run of confirming checks would.
      const burst = videos.filter((_, i) => i % VIDEOS_PER_CHANNEL === 2).slice(0, BURST);
      const before = received.size;
      const postmaster = await postmasterPid(sql);
      const cpuAtBurst = { worker: cpuOf(worker.pid) ?? 0, all: cpuSnapshot(postmaster) };
      const burstAt = Date.now();
      await sql`
        update videos set status = 'deleted', status_reason = 'terms_of_service', status_source = 'youtube_api',
          status_evidence = 'This video has been removed for violating YouTube''s Terms of Service.'
        where video_id = any(${burst})`;
      await fannedOut(sql);
      const fanOutSeconds = (Date.now() - burstAt) / 1000;
      const burstDeliveries = (await count(sql, `select count(*) from webhook_deliveries`)) - expected;
      await until(async () => received.size - before >= burstDeliveries, 120_000).catch(async () => {
        // What held deliveries back, as the owners' delivery logs say it.
        const held =
          await sql`select error, count(*)::int as attempts from webhook_attempts where error is not null group by error order by 2 desc limit 3`;
        problems.push(`${burstDeliveries - (received.size - before)} deliveries missing after 120 s: ${JSON.stringify(held)}`);
      });
      const burstTimes = [...received.values()].slice(before);
      const deliverySeconds = (Math.max(...burstTimes) - burstAt) / 1000;
      const perSecond = burstDeliveries / deliverySeconds;
      const burstCpu = cpuDelta(cpuAtBurst.all, cpuSnapshot(postmaster));
      // Per delivery: the worker's CPU, PostgreSQL's, and the receiver's (this process), in ms.
      const cpuPerDelivery = {
        workerMs: round(((cpuOf(worker.pid) ?? 0) - cpuAtBurst.worker) / 1000 / burstDeliveries, 3),
        postgresMs: round((burstCpu.postgresUs ?? 0) / 1000 / burstDeliveries, 3),
        receiverMs: round(burstCpu.selfUs / 1000 / burstDeliveries, 3),
        machineBusyShare: round((burstCpu.machineBusyUs ?? 0) / 1e6 / burstCpu.seconds / cpus().length, 2),
      };
      ctx.progress(
        `${burstDeliveries} deliveries of ${BURST} deletions in ${deliverySeconds.toFixed(1)} s (fanned out in ${fanOutSeconds.toFixed(1)} s)`,
      );

      // The API's CPU per feed request: the site-wide feed, a watchlist's, and a revalidation (304).
      const site = `${api.url}/feeds/deletions.atom`;
      const etag = (await fetch(site, { headers: { 'accept-encoding': 'identity' } })).headers.get('etag')!;
      const feedCpu = async (url: string, headers: Record<string, string> = {}) => {
        const load = await runLoad(
          { url, connections: 8, warmupSeconds: 2, durationSeconds: 8, headers },
          { mark: async () => cpuOf(api.pid) ?? 0 },
        );
        const cpuUs = (load.marks.end as number) - (load.marks.start as number);
        if (load.report.errors) problems.push(`${url}: ${load.report.errors} errors`);
        return {
          requestsPerSecond: round(load.report.requestsPerSecond, 0),
          statusCodes: load.report.statusCodes,
          cpuMsPerRequest: round(cpuUs / 1000 / load.report.requests, 3),
          p50Ms: round(load.report.latency.p50, 1),
        };
      };
      const feedsLoad = {
        siteFeed: await feedCpu(site),
        siteFeed304: await feedCpu(site, { 'if-none-match': etag }),
        watchlistFeed: await feedCpu(api.url + watchlistFeedPath(serverKey, feeds[0]!)),
      };
      if (verified === 0) problems.push('no delivery was verified');
      if (received.size < expected) problems.push(`${expected - received.size} deliveries never arrived`);
      const receiverDelay = distribution(toReceiver);
      const feedDelay = distribution(toFeed);
      const queuedDelay = distribution(fromQueued);
      return {
        parameters: {
          channels: CHANNELS,
          videos: videos.length,
          watchlists: WATCHLISTS,
          webhookEvery: WEBHOOK_EVERY,
          confirmed: CONFIRMED,
          burst: BURST,
          workerConcurrency: 8,
        },
        results: {
          confirmationToReceiverMs: receiverDelay,
          confirmationToFeedMs: feedDelay,
          checkQueuedToReceiverMs: queuedDelay,
          deliveries: expected,
          verified,
          burstDeliveries,
          deliveriesPerSecond: round(perSecond, 0),
          cpuPerDelivery,
          fanOutSeconds: round(fanOutSeconds, 1),
          feedsLoad,
        },
        targets: [
          target('p95 delay, confirming check queued → receiver (ms)', queuedDelay.p95, { atMost: 60_000 }),
          target('p95 delay, confirmation written → receiver (ms)', receiverDelay.p95, { atMost: 5_000 }),
          target('p95 delay, confirmation written → watchlist feed (ms)', feedDelay.p95, { atMost: 5_000 }),
          target('webhook deliveries per second', round(perSecond, 0), { atLeast: 500 }),
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

const count = async (sql: Sql, query: string) => Number((await sql.unsafe<{ count: string }[]>(query))[0]!.count);

/** Every change logged so far is on its watchlists' streams, and its deliveries are queued. */
const fannedOut = (sql: Sql) =>
  until(
    async () =>
      (await count(
        sql,
        `select (select count(*) from change_fanout_queue) + (select count(*) from graphile_worker.jobs where task_identifier = 'fan_out_changes') as count`,
      )) === 0,
    120_000,
  ).catch(async (error) => {
    const failed = await sql`select task_identifier, attempts, last_error from graphile_worker.jobs where last_error is not null limit 3`;
    throw new Error(`${(error as Error).message}: the fan-out did not finish ${JSON.stringify(failed)}`);
  });

async function until(done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
