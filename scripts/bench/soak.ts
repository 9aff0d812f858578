/**
 * `npm start` with its defaults (embedded PostgreSQL in a DATA_DIR of its own) under SOAK_CLIENTS clients for
 * SOAK_SECONDS of mixed reads after a warm-up of the same load, over a generated corpus and a crawled yt-dlp
 * archive. Targets: no errors at all, and the service's RSS at the end within 10 % of its RSS at the start.
 */
import { rm } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { connect } from '../../core/db/database.ts';
import { embeddedUrl, stopEmbeddedPostgres } from '../../core/db/embedded.ts';
import { createArchiveFixture } from '../../test/kit/archive-fixture.ts';
import { writeCorpus } from '../../test/kit/corpus-write.ts';
import { createCorpus } from '../../test/kit/corpus.ts';
import { type Benchmark, sleep, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { startService } from './lib/processes.ts';
import { distribution, round } from './lib/stats.ts';
import { memoryOf } from './lib/usage.ts';

const CLIENTS = numberKnob('SOAK_CLIENTS', 200);
const SECONDS = numberKnob('SOAK_SECONDS', 60);
const VIDEOS = numberKnob('SOAK_VIDEOS', 20_000);
const WARM_UP_SECONDS = numberKnob('SOAK_WARM_UP_SECONDS', 15);
const MAX_RSS_GROWTH_PERCENT = 10;
/** Each client's next request, by these weights. */
const MIX = { fts: 35, subtitles: 25, 'status-history': 25, stream: 15 };
type RouteName = keyof typeof MIX;

/** One GET on a kept-alive connection, read to its end (a stream ends once its stored part is sent: search:complete). */
function get(agent: Agent, base: URL, path: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const options = { host: base.hostname, port: base.port, path, agent, headers: { 'X-API-Key': key }, timeout: 30_000 };
    const request = httpRequest(options, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.once('error', reject);
    });
    request.once('timeout', () => request.destroy(new Error('no answer within 30 s')));
    request.once('error', reject);
    request.end();
  });
}

export const benchmark: Benchmark = {
  name: 'soak',
  title: `Soak: ${CLIENTS} clients for ${SECONDS} s of mixed reads on \`npm start\``,
  description:
    '`node scripts/bin.mjs start` with its defaults under concurrent clients on kept-alive connections, each sending one request after another: ' +
    'GET /api/fts (half of them in=subtitles), /api/subtitles/:id, /api/videos/:id/status-history and /api/search/:id/stream (a finished search, read to search:complete). ' +
    "Any non-2xx answer or failed connection is an error. The service's RSS after the warm-up and at the end of the load.",
  async run(ctx) {
    const dataDir = join(ctx.dataDir, `soak-${process.pid}`);
    await rm(dataDir, { recursive: true, force: true });
    const archive = await createArchiveFixture({ videos: 300, seed: 'soak', mediaEvery: 0 });
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ARCHIVE_DIR: archive.dir };
    const service = await startService('start', env, { unset: ['DATABASE_URL'], timeoutMs: 120_000 });
    const sql = connect(embeddedUrl(dataDir), { max: 4, role: 'bench-soak' });
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    try {
      const base = new URL(service.url!);
      const corpus = createCorpus({ seed: 7, videos: VIDEOS });
      await writeCorpus(sql, corpus);
      const user = await createUser(sql, { email: 'soak@example.org', tier: 'pro', isAdmin: false });
      const { key } = await createApiKey(sql, { userId: user.id, scope: 'L4' });
      // Staying power, not quotas: every limit of the tier lifted (refusals kept).
      await sql`update tier_limits set max_count = null where tier = 'pro' and max_count > 0`;
      // A second status for a tenth of the videos, so that histories have more than their first row.
      await sql`update videos set status = 'deleted', status_reason = 'unknown' where video_id in (select video_id from videos where status = 'live' order by video_id limit ${Math.ceil(VIDEOS / 10)})`;
      const started = await fetch(`${base.origin}/api/search`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: archive.handle }),
      });
      if (started.status !== 200) throw new Error(`POST /api/search answered ${started.status}: ${await started.text()}`);
      const streamPath = ((await started.json()) as { data: { sseEndpointUrl: string } }).data.sseEndpointUrl;
      while (!(await get(agent, base, streamPath, key)).body.includes('event: search:complete')) await sleep(500);
      await sleep(6_000); // the tier cache (5 s) forgets the old limits
      ctx.progress(`${VIDEOS} videos seeded and the archive crawled`);

      const words = Array.from({ length: 100 }, (_, i) =>
        corpus
          .video(i * 13)
          .title.split(/\s+/)
          .find((word) => /^\p{L}{3,}$/u.test(word)),
      );
      const found = words.filter((word): word is string => word !== undefined);
      const statusIds = [
        ...Array.from({ length: 500 }, (_, i) => corpus.video(Math.floor((i * VIDEOS) / 500)).videoId),
        ...archive.videoIds.slice(0, 100),
      ];
      const paths: Record<RouteName, string[]> = {
        fts: found.flatMap((word, i) => [
          `/api/fts?q=${encodeURIComponent(word)}`,
          `/api/fts?q=${encodeURIComponent(`${word} ${found[(i + 1) % found.length]}`)}&in=subtitles`,
        ]),
        subtitles: archive.subtitleVideoIds.map((id) => `/api/subtitles/${id}`),
        'status-history': statusIds.map((id) => `/api/videos/${id}/status-history`),
        stream: [streamPath],
      };
      const weighted = (Object.keys(MIX) as RouteName[]).flatMap((route) => Array<RouteName>(MIX[route]).fill(route));
      const latencies = Object.fromEntries(Object.keys(MIX).map((route) => [route, [] as number[]])) as Record<RouteName, number[]>;
      const errors: string[] = [];
      let measuring = false;
      let stopAt = 0;
      let seq = 0;
      const client = async () => {
        while (performance.now() < stopAt) {
          const route = weighted[seq++ % weighted.length]!;
          const path = paths[route][(seq * 7919) % paths[route].length]!;
          const began = performance.now();
          const answer = await get(agent, base, path, key).catch((error: Error) => ({ status: 0, body: error.message }));
          if (!measuring) continue;
          if (answer.status === 200 && (route !== 'stream' || answer.body.includes('event: search:complete')))
            latencies[route].push(performance.now() - began);
          else errors.push(`${answer.status} ${path}: ${answer.body.slice(0, 160)}`);
        }
      };
      const load = async (seconds: number) => {
        stopAt = performance.now() + seconds * 1000;
        await Promise.all(Array.from({ length: CLIENTS }, client));
      };
      ctx.progress(`warm-up: ${CLIENTS} clients for ${WARM_UP_SECONDS} s`);
      await load(WARM_UP_SECONDS);
      const rssStart = memoryOf(service.pid)!.rssMiB;
      ctx.progress(`soak: ${CLIENTS} clients for ${SECONDS} s`);
      measuring = true;
      await load(SECONDS);
      const rssEnd = memoryOf(service.pid)!.rssMiB;
      const growthPercent = round(((rssEnd - rssStart) / rssStart) * 100, 1);
      const requests = Object.values(latencies).reduce((sum, list) => sum + list.length, errors.length);
      const problems = errors.length ? [`${errors.length} errors: ${errors.slice(0, 5).join(' | ')}`] : [];
      if (service.exited()) problems.push('the service exited during the soak');
      return {
        parameters: { clients: CLIENTS, seconds: SECONDS, warmUpSeconds: WARM_UP_SECONDS, corpusVideos: VIDEOS, mix: MIX },
        results: {
          requests,
          errors: errors.length,
          latencyMs: Object.fromEntries(Object.entries(latencies).map(([route, list]) => [route, distribution(list)])),
          rssMiB: { start: round(rssStart, 1), end: round(rssEnd, 1), growthPercent },
        },
        targets: [
          target('errors', errors.length, { atMost: 0 }),
          target('RSS growth over the soak (%)', growthPercent, { atMost: MAX_RSS_GROWTH_PERCENT }),
        ],
        ok: problems.length === 0,
        problems,
      };
    } finally {
      agent.destroy();
      await sql.end({ timeout: 5 });
      await service.stop(30_000);
      await stopEmbeddedPostgres(dataDir, ctx.log).catch(() => undefined);
      await archive.cleanup();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
