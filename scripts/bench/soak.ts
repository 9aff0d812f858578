/**
 * Soak: `npm start` (API + worker, the embedded PostgreSQL in a DATA_DIR of its own, every default)
 * under SOAK_CLIENTS concurrent clients (default 200) for SOAK_SECONDS (default 60) of mixed reads:
 * full-text search, subtitles, status history, and search streams (open, read the stored part to
 * search:complete, close), after SOAK_WARM_UP_SECONDS (default 15) of the same load. Seeded with a generated corpus (SOAK_VIDEOS, default 20,000: the search
 * index and a status history per video) and a yt-dlp archive fixture crawled through the service
 * (its search session and subtitle files). Checks: no errors at all, and the service's RSS at the
 * end of the load within 10 % of its RSS at the start.
 */
import { Agent, request as httpRequest } from 'node:http';
import { rm } from 'node:fs/promises';
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
import { percentile, round } from './lib/stats.ts';
import { memoryOf, memorySampler } from './lib/usage.ts';

const CLIENTS = numberKnob('SOAK_CLIENTS', 200);
const SECONDS = numberKnob('SOAK_SECONDS', 60);
const VIDEOS = numberKnob('SOAK_VIDEOS', 20_000);
const WARM_UP_SECONDS = numberKnob('SOAK_WARM_UP_SECONDS', 15);
const MAX_RSS_GROWTH = 0.1;
/** Each client's next request: the route by these weights. */
const MIX = { fts: 35, subtitles: 25, 'status-history': 25, stream: 15 } as const;
type RouteName = keyof typeof MIX;

interface RouteStats {
  latencies: number[];
  errors: number;
  errorSamples: Set<string>;
}

/** One GET on a kept-alive connection, read to its end; a stream ends by itself once its stored part is sent (search:complete). */
function get(agent: Agent, base: URL, path: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: base.hostname, port: base.port, path, agent, headers: { 'X-API-Key': key }, timeout: 30_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.once('error', reject);
      },
    );
    request.once('timeout', () => request.destroy(new Error('no answer within 30 s')));
    request.once('error', reject);
    request.end();
  });
}

export const benchmark: Benchmark = {
  name: 'soak',
  title: 'Soak: 200 clients for 60 s of mixed reads on `npm start`',
  description:
    '`node scripts/bin.mjs start` with its defaults (embedded PostgreSQL in its own DATA_DIR; ARCHIVE_DIR set so that a channel search has a source) under concurrent clients on kept-alive connections, each sending one request after another: ' +
    'GET /api/fts (words of the corpus, half of them with in=subtitles), GET /api/subtitles/:id, GET /api/videos/:id/status-history and GET /api/search/:id/stream (the stored part of a finished search, read to search:complete). ' +
    'Any non-2xx answer or failed connection is an error. RSS of the service process after a warm-up and at the end of the load.',
  async run(ctx) {
    const dataDir = join(ctx.dataDir, `soak-${process.pid}`);
    await rm(dataDir, { recursive: true, force: true });
    const archive = await createArchiveFixture({ videos: 300, seed: 'soak', mediaEvery: 0 });
    // npm start's defaults: the embedded cluster in DATA_DIR, whatever DATABASE_URL the harness runs with.
    const service = await startService(
      'start',
      { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ARCHIVE_DIR: archive.dir },
      { unset: ['DATABASE_URL'], timeoutMs: 120_000 },
    );
    const sql = connect(embeddedUrl(dataDir), { max: 4, role: 'bench-soak' });
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    try {
      const base = new URL(service.url!);
      ctx.progress(`service ready at ${base.origin} (pid ${service.pid}); seeding ${VIDEOS} videos`);
      const corpus = createCorpus({ seed: 7, videos: VIDEOS });
      await writeCorpus(sql, corpus);
      const user = await createUser(sql, { email: 'soak@example.org', tier: 'pro', isAdmin: false });
      const { key } = await createApiKey(sql, { userId: user.id, scope: 'L4' });
      // The soak measures staying power, not quotas: every limit of the tier lifted (refusals kept).
      await sql`update tier_limits set max_count = null where tier = 'pro' and max_count > 0`;
      // A second status for some videos, so that histories have more than their first row.
      await sql`update videos set status = 'deleted', status_reason = 'unknown' where video_id in (select video_id from videos where status = 'live' order by video_id limit ${Math.ceil(VIDEOS / 10)})`;

      const started = await fetch(`${base.origin}/api/search`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: archive.handle }),
      });
      if (started.status !== 200) throw new Error(`POST /api/search answered ${started.status}: ${await started.text()}`);
      const streamPath = ((await started.json()) as { data: { sseEndpointUrl: string } }).data.sseEndpointUrl;
      for (let done = false; !done; ) {
        const stream = await get(agent, base, streamPath, key);
        done = stream.body.includes('event: search:complete');
        if (!done) await sleep(500);
      }
      await sleep(6_000); // the tier cache (5 s) forgets the old limits

      const videoIds = Array.from({ length: 500 }, (_, index) => corpus.video(Math.floor((index * VIDEOS) / 500)).videoId);
      const words = Array.from({ length: 100 }, (_, index) =>
        corpus
          .video(index * 13)
          .title.split(/\s+/)
          .find((word) => /^\p{L}{3,}$/u.test(word)),
      ).filter((word): word is string => word !== undefined);
      const queries = words.flatMap((word, index) => [
        `/api/fts?q=${encodeURIComponent(word)}`,
        `/api/fts?q=${encodeURIComponent(`${word} ${words[(index + 1) % words.length]}`)}&in=subtitles`,
      ]);
      const paths: Record<RouteName, string[]> = {
        fts: queries,
        subtitles: archive.subtitleVideoIds.map((id) => `/api/subtitles/${id}`),
        'status-history': [...videoIds, ...archive.videoIds.slice(0, 100)].map((id) => `/api/videos/${id}/status-history`),
        stream: [streamPath],
      };
      const weighted = (Object.keys(MIX) as RouteName[]).flatMap((route) => Array<RouteName>(MIX[route]).fill(route));
      const stats = Object.fromEntries(
        (Object.keys(MIX) as RouteName[]).map((route) => [route, { latencies: [], errors: 0, errorSamples: new Set() }]),
      ) as unknown as Record<RouteName, RouteStats>;

      let measuring = false;
      let stopAt = performance.now() + WARM_UP_SECONDS * 1000;
      let seq = 0;
      const client = async () => {
        while (performance.now() < stopAt) {
          const route = weighted[seq++ % weighted.length]!;
          const list = paths[route];
          const path = list[(seq * 7919) % list.length]!;
          const began = performance.now();
          try {
            const answer = await get(agent, base, path, key);
            const ok = answer.status === 200 && (route !== 'stream' || answer.body.includes('event: search:complete'));
            if (!measuring) continue;
            if (ok) stats[route].latencies.push(performance.now() - began);
            else {
              stats[route].errors += 1;
              if (stats[route].errorSamples.size < 5)
                stats[route].errorSamples.add(`${answer.status} ${path}: ${answer.body.slice(0, 160)}`);
            }
          } catch (error) {
            if (!measuring) continue;
            stats[route].errors += 1;
            if (stats[route].errorSamples.size < 5) stats[route].errorSamples.add(`${path}: ${(error as Error).message}`);
          }
        }
      };
      ctx.progress(`warm-up: ${CLIENTS} clients for ${WARM_UP_SECONDS} s`);
      await Promise.all(Array.from({ length: CLIENTS }, client));
      const rssStart = memoryOf(service.pid)!.rssMiB;
      const sampler = memorySampler(service.pid, 1_000);
      ctx.progress(`soak: ${CLIENTS} clients for ${SECONDS} s (RSS at start ${round(rssStart, 1)} MiB)`);
      measuring = true;
      const loadStarted = performance.now();
      stopAt = loadStarted + SECONDS * 1000;
      await Promise.all(Array.from({ length: CLIENTS }, client));
      const elapsed = (performance.now() - loadStarted) / 1000;
      sampler.stop();
      const rssEnd = memoryOf(service.pid)!.rssMiB;
      const rssPeak = sampler.maxSince(0);

      const routes = (Object.keys(MIX) as RouteName[]).map((route) => {
        const sorted = Float64Array.from(stats[route].latencies).sort();
        const at = (p: number) => round(percentile(sorted, p), 1);
        const maxMs = round(sorted[sorted.length - 1] ?? Number.NaN, 1);
        return [route, { requests: sorted.length, errors: stats[route].errors, p50Ms: at(50), p99Ms: at(99), maxMs }] as const;
      });
      const errors = Object.values(stats).reduce((sum, route) => sum + route.errors, 0);
      const requests = Object.values(stats).reduce((sum, route) => sum + route.latencies.length, 0) + errors;
      const growth = (rssEnd - rssStart) / rssStart;
      const problems: string[] = [];
      if (errors > 0)
        problems.push(
          `${errors} errors: ${Object.values(stats)
            .flatMap((route) => [...route.errorSamples])
            .slice(0, 5)
            .join(' | ')}`,
        );
      if (growth > MAX_RSS_GROWTH)
        problems.push(
          `RSS grew ${round(growth * 100, 1)} % (${round(rssStart, 1)} → ${round(rssEnd, 1)} MiB), more than ${MAX_RSS_GROWTH * 100} %`,
        );
      if (service.exited()) problems.push('the service exited during the soak');
      // What the service said about its failures: the cause behind a 500's request id.
      const serviceErrors = service.warnings
        .filter((entry) => entry.level === 'error')
        .slice(0, 3)
        .map((entry) => JSON.stringify(entry).slice(0, 600));
      return {
        parameters: {
          clients: CLIENTS,
          seconds: SECONDS,
          warmUpSeconds: WARM_UP_SECONDS,
          corpusVideos: VIDEOS,
          archiveVideos: archive.allVideoIds.length,
          mix: MIX,
          limits: 'pro tier, every limit lifted',
        },
        results: {
          requests,
          errors,
          requestsPerSecond: round(requests / elapsed, 0),
          routes: Object.fromEntries(routes),
          rssMiB: { start: round(rssStart, 1), end: round(rssEnd, 1), peak: round(rssPeak, 1), growthPercent: round(growth * 100, 1) },
          serviceErrors,
        },
        targets: [
          target('errors', errors, { atMost: 0 }),
          target('RSS growth over the soak (%)', round(growth * 100, 1), { atMost: MAX_RSS_GROWTH * 100 }),
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
