/**
 * POST /api/subtitles/bulk-download of 100 videos' auto captions (stored as fetches store them) against
 * `afterimage api` in a child process: latency, bytes on the wire and the API's CPU and RSS, for 30-minute
 * and 2-hour videos, JSON cues plain, gzip and brotli, and a zip.
 */
import { request as httpRequest } from 'node:http';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { storeTrack } from '../../core/subtitles/store.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { rollingCaptions } from './lib/corpus.ts';
import type { Benchmark } from './lib/harness.ts';
import { listKnob, numberKnob } from './lib/knobs.ts';
import { sourcelessApiEnv, startService } from './lib/processes.ts';
import { distribution, round } from './lib/stats.ts';
import { cpuOf, memoryOf, memorySampler } from './lib/usage.ts';

const VIDEOS = numberKnob('SUBTITLES_BULK_VIDEOS', 100);
const RUNS = 7;
const SIZES = [
  { id: '30min', vttMB: 0.25 },
  { id: '2h', vttMB: 1 },
].filter((size) => listKnob('SUBTITLES_BULK_SIZES', '30min,2h').includes(size.id));
const VARIANTS = [
  { format: 'json', coding: 'identity' },
  { format: 'json', coding: 'gzip' },
  { format: 'json', coding: 'br' },
  { format: 'zip', coding: 'identity' },
];
const CHANNEL_ID = 'UCbenchSubtitlesBulk0000';

const videoId = (size: string, i: number) => `${size.replace(/[^a-z0-9]/gi, '')}${String(i).padStart(3, '0')}bulkbench`.slice(0, 11);

/** A POST read to its end as sent (not decoded): status, content coding and bytes on the wire. */
function post(url: string, key: string, coding: string, body: string): Promise<{ status: number; coding: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'X-API-Key': key, 'Accept-Encoding': coding };
    const request = httpRequest(url, { method: 'POST', headers }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, coding: response.headers['content-encoding'] ?? 'identity', bytes }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

export const benchmark: Benchmark = {
  name: 'subtitles-bulk',
  title: `Bulk download of ${VIDEOS} videos' subtitles`,
  description:
    `POST /api/subtitles/bulk-download with ${VIDEOS} video ids against \`afterimage api\` in a child process: latency (p50/p95 of ${RUNS} runs after one to warm up), ` +
    "bytes on the wire, the API's CPU per request and RSS (sampled every 25 ms), for 30-minute and 2-hour auto captions, as JSON cues (plain, gzip, brotli) and a zip.",
  async run(ctx) {
    const db = await ctx.database();
    const sql = db.pool({ max: 4, role: 'bench' });
    await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, subtitleDownloadsPerDay: null } });
    const user = await createUser(sql, { email: 'bulk-bench@example.org', tier: 'pro', isAdmin: false });
    const { key } = await createApiKey(sql, { userId: user.id });
    await sql`insert into channels (channel_id, title) values (${CHANNEL_ID}, 'Bench bulk channel')`;
    for (const size of SIZES) {
      for (let i = 0; i < VIDEOS; i++) {
        const id = videoId(size.id, i);
        await sql`insert into videos (video_id, channel_id, title, status) values (${id}, ${CHANNEL_ID}, ${`Bench video ${i}`}, 'live')`;
        const text = rollingCaptions(size.vttMB, 1000 + i);
        await sql.begin((tx) => storeTrack(tx, { videoId: id, language: 'en', kind: 'auto', source: 'archive', text }));
      }
      ctx.progress(`${VIDEOS} videos of ${size.id} stored`);
    }
    const api = await startService('api', sourcelessApiEnv(ctx.dataDir, db.url, 'subtitles-bulk'));
    const idleRssMiB = round(memoryOf(api.pid)!.rssMiB, 1);
    const sampler = memorySampler(api.pid, 25);
    const problems: string[] = [];
    const results = [];
    try {
      for (const size of SIZES) {
        const body = (format: string) =>
          JSON.stringify({ videoIds: Array.from({ length: VIDEOS }, (_, i) => videoId(size.id, i)), format });
        for (const { format, coding } of VARIANTS) {
          const ask = () => post(`${api.url}/api/subtitles/bulk-download`, key, coding, body(format));
          await ask();
          const since = performance.now();
          const cpuBefore = cpuOf(api.pid)!;
          const latencies: number[] = [];
          let answer = { status: 0, coding: '', bytes: 0 };
          for (let run = 0; run < RUNS; run++) {
            const started = performance.now();
            answer = await ask();
            latencies.push(performance.now() - started);
          }
          if (answer.status !== 200 || answer.coding !== coding)
            problems.push(`${size.id} ${format} ${coding}: status ${answer.status}, coded ${answer.coding}`);
          const result = {
            size: size.id,
            format,
            coding,
            wireMB: round(answer.bytes / 1e6, 2),
            latencyMs: distribution(latencies, 1),
            apiCpuMs: round((cpuOf(api.pid)! - cpuBefore) / 1000 / RUNS, 0),
            apiPeakRssMiB: round(sampler.maxSince(since), 1),
          };
          results.push(result);
          ctx.progress(
            `${size.id} ${format} ${coding}: ${result.wireMB} MB, p50 ${result.latencyMs.p50} ms, API CPU ${result.apiCpuMs} ms`,
          );
        }
      }
    } finally {
      sampler.stop();
      await api.stop();
    }
    return {
      parameters: { videos: VIDEOS, runs: RUNS, sizes: SIZES },
      results: { apiIdleRssMiB: idleRssMiB, variants: results },
      targets: [],
      ok: problems.length === 0,
      problems,
    };
  },
};
