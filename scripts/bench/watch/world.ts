/**
 * The watch benchmark's world: its seeded database, the webhook receiver, the feed poller and a feed's load.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { Sql } from '../../../core/db/database.ts';
import type { ServerKey } from '../../../core/secrets/serverKey.ts';
import { watchlistFeedPath } from '../../../core/watchlists/ownWatchlist.ts';
import { sleep } from '../lib/harness.ts';
import { numberKnob } from '../lib/knobs.ts';
import { runLoad } from '../lib/load.ts';
import type { ServiceProcess } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';

/** WATCH_CHANNELS runs it smaller (100 videos, 30 watchers a channel). */
export const CHANNELS = numberKnob('WATCH_CHANNELS', 1_000);
export const VIDEOS_PER_CHANNEL = 100;
export const WATCHLISTS = CHANNELS * 10;
export const WEBHOOK_EVERY = 5;
export const CONFIRMED = 100;
export const BURST = 1_000;
export const FEEDS_POLLED = 20;
export const SECRET = 'bench-watch-secret-key-of-32-characters-or-more';
const SIGNING_SECRET = `whsec_${Buffer.from('bench-watch-signing-secret!!').toString('base64')}`;
const UNFINISHED_FANOUT = `select (select count(*) from change_fanout_queue)
  + (select count(*) from graphile_worker.jobs where task_identifier = 'fan_out_changes') as count`;

export const count = async (sql: Sql, query: string) => Number((await sql.unsafe<{ count: string }[]>(query))[0]!.count);

export async function until(done: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await done()); await sleep(200))
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs / 1000} s`);
}

/** Every change logged so far is on its watchlists' streams, and its deliveries are queued. */
export const fannedOut = (sql: Sql) =>
  until(async () => (await count(sql, UNFINISHED_FANOUT)) === 0).catch(async (error) => {
    const jobs =
      await sql`select task_identifier, attempts, run_at, locked_at, last_error from graphile_worker.jobs where task_identifier = 'fan_out_changes'`;
    throw new Error(`${(error as Error).message}: the fan-out did not finish: ${JSON.stringify(jobs)}`);
  });

/** A receiver that records when each delivery (by webhook-id) and each change first arrived, and verifies one in 50. */
export async function startReceiver() {
  const webhook = new Webhook(SIGNING_SECRET);
  const arrivals = { deliveries: new Map<string, number>(), changes: new Map<string, number>(), verified: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      if (arrivals.deliveries.size % 50 === 0 && webhook.verify(body, req.headers as Record<string, string>)) arrivals.verified++;
      arrivals.deliveries.set(req.headers['webhook-id'] as string, at);
      const changeId = (JSON.parse(body) as { data: { id: string } }).data.id;
      arrivals.changes.set(changeId, Math.min(arrivals.changes.get(changeId) ?? at, at));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { arrivals, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, close: () => server.close() };
}

/** The channels, videos, users, watchlists and webhooks: one statement each. */
export async function seed(sql: Sql, channels: string[], videos: string[], receiverUrl: string, serverKey: ServerKey) {
  await sql`insert into channels (channel_id, title) select id, id from unnest(${channels}::text[]) as id`;
  await sql`
    insert into videos (video_id, channel_id, title, upload_date, status, status_source)
    select v, (${channels}::text[])[1 + ((n - 1) / ${VIDEOS_PER_CHANNEL})::int], 'Video ' || v, date '2020-01-01', 'live', 'youtube_api'
    from unnest(${videos}::text[]) with ordinality as x(v, n)`;
  await sql`insert into users (email, tier) select 'watcher' || n || '@bench.localhost', 'pro' from generate_series(1, ${WATCHLISTS / 10}) n`;
  await sql`insert into watchlists (owner_id, name) select u.id, 'List ' || n from users u, generate_series(1, 10) n`;
  await sql`
    insert into watchlist_items (watchlist_id, kind, channel_id, created_at)
    select w.id, 'channel', (${channels}::text[])[1 + (w.r * 7 + k * 331) % ${CHANNELS}], now() - interval '1 day'
    from (select id, row_number() over (order by id) as r from watchlists) w, generate_series(0, 2) k
    on conflict do nothing`;
  await sql`
    insert into webhook_endpoints (watchlist_id, url, secret_sealed) select id, ${receiverUrl} || '/' || id, ${serverKey.seal(SIGNING_SECRET)}
    from watchlists where abs(hashtext(id::text)) % ${WEBHOOK_EVERY} = 0`;
  // The feeds' readers all come from this one address here: its page requests are not limited.
  await sql`update tier_limits set max_count = null where tier = 'anonymous' and limit_name = 'pageRequestsPerMinute'`;
  await sql`vacuum analyze`;
}

/** Polls some watchlists' private feeds every 100 ms, noting when each change first shows (watchlist:change → time). */
export function pollFeeds(api: ServiceProcess, serverKey: ServerKey, feeds: { id: string; feedVersion: number }[]) {
  const seen = new Map<string, number>();
  let polling = true;
  const done = (async () => {
    for (; polling; await sleep(100))
      for (const feed of feeds) {
        // A kept-alive connection the API closed meanwhile is reset: the next poll asks again.
        const xml = await fetch(api.url + watchlistFeedPath(serverKey, feed)).then(
          (answer) => answer.text(),
          () => '',
        );
        for (const [, id] of xml.matchAll(/:change:(\d+)</g)) if (!seen.has(`${feed.id}:${id}`)) seen.set(`${feed.id}:${id}`, Date.now());
      }
  })();
  return { seen, stop: () => ((polling = false), done) };
}

/** The API's CPU per request and its rate for a feed URL, 8 connections for 8 s. */
export async function feedLoad(api: ServiceProcess, url: string, headers: Record<string, string> = {}) {
  const { report, marks } = await runLoad(
    { url, connections: 8, warmupSeconds: 2, durationSeconds: 8, headers },
    { mark: async () => cpuOf(api.pid) ?? 0 },
  );
  const cpuMsPerRequest = round(((marks.end as number) - (marks.start as number)) / 1000 / report.requests, 3);
  return { requestsPerSecond: round(report.requestsPerSecond, 0), statusCodes: report.statusCodes, cpuMsPerRequest, errors: report.errors };
}
