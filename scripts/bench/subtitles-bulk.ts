/**
 * POST /api/subtitles/bulk-download of 100 videos' subtitles: latency and the API's memory.
 *
 * The API runs as `node scripts/bin.mjs api` in a child process (its RSS read from /proc, sampled
 * every 25 ms) over a fresh database holding 100 videos with one auto-caption track each, stored
 * the way fetches store them (core/subtitles/store.ts: parsed and normalised from generated rolling
 * auto-caption WebVTT). Two sizes: 30-minute videos (about 28 kB of text each) and 2-hour videos
 * (about 110 kB each, 11 MB in all, near the 20 MiB limit of one download).
 *
 * Each variant (format json, json with a query, srt, zip; the JSON ones also coded gzip and br, as
 * Accept-Encoding asks) is asked once to warm up, then RUNS times one after another; latency is from
 * sending the request to the last byte of the answer, bytes are those on the wire, CPU the API
 * process's per request. SUBTITLES_BULK_VIDEOS and SUBTITLES_BULK_SIZES (30min,2h) run it smaller.
 */
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import { storeTrack } from '../../core/subtitles/store.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { rollingCaptions } from './lib/corpus.ts';
import { type BenchContext, type Benchmark, type BenchOutcome, packageVersion } from './lib/harness.ts';
import { listKnob, numberKnob } from './lib/knobs.ts';
import { sourcelessApiEnv, startService } from './lib/processes.ts';
import { percentile, round } from './lib/stats.ts';
import { cpuOf, memoryOf, memorySampler } from './lib/usage.ts';

const VIDEOS = numberKnob('SUBTITLES_BULK_VIDEOS', 100);
const RUNS = 7;
const CHANNEL_ID = 'UCbenchSubtitlesBulk0000'; // UC + 22
const SIZES = [
  { id: '30min', label: `${VIDEOS} videos of 30 minutes`, vttMB: 0.25 },
  { id: '2h', label: `${VIDEOS} videos of 2 hours`, vttMB: 1 },
].filter((size) => listKnob('SUBTITLES_BULK_SIZES', '30min,2h').includes(size.id));
/** The content codings asked for (Accept-Encoding) of the JSON answers; a zip is never coded. */
const CODINGS = ['identity', 'gzip', 'br'] as const;
const FORMATS = [
  { id: 'json', label: 'json (cues)', body: { format: 'json' } },
  { id: 'json+query', label: 'json (cues) + query', body: { format: 'json', query: 'the developer' } },
  { id: 'srt', label: 'srt (text in JSON)', body: { format: 'srt' } },
  { id: 'zip', label: 'zip of SRT files', body: { format: 'zip' } },
] as const;

interface VariantResult {
  size: string;
  format: string;
  coding: string;
  runs: number;
  /** Bytes on the wire (coded) and once decoded, MB. */
  wireMB: number;
  /** CPU time of the API process per request, ms. */
  apiCpuMs: number;
  latencyMs: { p50: number; p95: number; max: number; all: number[] };
  responseMB: number;
  /** API RSS just before the variant's first request, its highest sample during the variant, and the difference (MiB). */
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssDeltaMiB: number;
}

interface SizeResult {
  size: string;
  label: string;
  cues: number;
  textMB: number;
  storedJsonMB: number;
  storeSeconds: number;
  variants: VariantResult[];
}

const videoId = (size: string, i: number) =>
  `${size.replace(/[^a-z0-9]/gi, '')}${String(i).padStart(3, '0')}bulkbench`.slice(0, 11).padEnd(11, '_');

async function run(ctx: BenchContext): Promise<BenchOutcome> {
  const db = await ctx.database();
  const sql = db.pool({ max: 4, role: 'bench' });
  await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, subtitleDownloadsPerDay: null } });
  const user = await createUser(sql, { email: 'bulk-bench@example.org', tier: 'pro', isAdmin: false });
  const { key } = await createApiKey(sql, { userId: user.id });
  await sql`insert into channels (channel_id, title) values (${CHANNEL_ID}, 'Bench bulk channel')`;

  const sizes: SizeResult[] = [];
  const problems: string[] = [];
  for (const size of SIZES) {
    const started = performance.now();
    let cues = 0;
    let textBytes = 0;
    for (let i = 0; i < VIDEOS; i++) {
      const id = videoId(size.id, i);
      await sql`insert into videos (video_id, channel_id, title, status) values (${id}, ${CHANNEL_ID}, ${`Bench video ${i}`}, 'live')`;
      const stored = await sql.begin((tx) =>
        storeTrack(tx, { videoId: id, language: 'en', kind: 'auto', source: 'archive', text: rollingCaptions(size.vttMB, 1000 + i).text }),
      );
      cues += stored!.track.cueCount;
      textBytes += stored!.track.textBytes;
    }
    const [json] = await sql<{ bytes: number }[]>`
      select coalesce(sum(pg_column_size(cues)), 0)::int as bytes from subtitle_tracks where video_id like ${`${videoId(size.id, 0).slice(0, 2)}%`}`;
    const storeSeconds = (performance.now() - started) / 1000;
    ctx.progress(`${size.label}: ${cues} cues, ${round(textBytes / 1e6)} MB of text stored in ${round(storeSeconds, 1)} s`);
    sizes.push({
      size: size.id,
      label: size.label,
      cues,
      textMB: round(textBytes / 1e6)!,
      storedJsonMB: round(json!.bytes / 1e6)!,
      storeSeconds: round(storeSeconds, 1)!,
      variants: [],
    });
  }

  const api = await startService('api', sourcelessApiEnv(ctx.dataDir, db.url, 'subtitles-bulk'));
  const idle = memoryOf(api.pid)!;
  ctx.progress(
    `API pid ${api.pid} at ${api.url}, ready in ${Math.round(api.readyAt - api.spawnedAt)} ms, RSS ${round(idle.rssMiB, 0)} MiB`,
  );
  const sampler = memorySampler(api.pid, 25);
  try {
    for (const size of sizes) {
      const ids = Array.from({ length: VIDEOS }, (_, i) => videoId(size.size, i));
      for (const format of FORMATS)
        for (const coding of format.id === 'zip' ? (['identity'] as const) : CODINGS) {
          const request = async () => {
            const startedAt = performance.now();
            const response = await post(
              `${api.url}/api/subtitles/bulk-download`,
              key,
              coding,
              JSON.stringify({ videoIds: ids, ...format.body }),
            );
            const ms = performance.now() - startedAt;
            const bytes = response.decoded;
            if (response.status !== 200)
              throw new Error(`${format.id}: status ${response.status}: ${new TextDecoder().decode(bytes.slice(0, 300))}`);
            if ((response.coding ?? 'identity') !== coding)
              problems.push(`${size.size} ${format.id}: asked for ${coding}, got ${response.coding ?? 'identity'}`);
            if (format.id !== 'zip') {
              const body = JSON.parse(new TextDecoder().decode(bytes)) as { data: { totals: { returned: number } } };
              if (body.data.totals.returned !== VIDEOS)
                problems.push(`${size.size} ${format.id}: ${body.data.totals.returned} videos returned, not ${VIDEOS}`);
            } else if (bytes[0] !== 0x50 || bytes[1] !== 0x4b) problems.push(`${size.size} zip: not a zip archive`);
            return { ms, bytes: bytes.length, wire: response.wire };
          };
          await request(); // warm-up
          const before = memoryOf(api.pid)!.rssMiB;
          const since = performance.now();
          const cpuBefore = cpuOf(api.pid)!;
          const latencies: number[] = [];
          let bytes = 0;
          let wire = 0;
          for (let i = 0; i < RUNS; i++) {
            const result = await request();
            latencies.push(result.ms);
            bytes = result.bytes;
            wire = result.wire;
          }
          const apiCpuMs = (cpuOf(api.pid)! - cpuBefore) / 1000 / RUNS;
          const peak = Math.max(sampler.maxSince(since), memoryOf(api.pid)!.rssMiB);
          const sorted = [...latencies].sort((a, b) => a - b);
          const variant: VariantResult = {
            size: size.size,
            format: format.id,
            coding,
            runs: RUNS,
            wireMB: round(wire / 1e6, 2)!,
            apiCpuMs: round(apiCpuMs, 0)!,
            latencyMs: {
              p50: round(percentile(sorted, 50), 1)!,
              p95: round(percentile(sorted, 95), 1)!,
              max: round(sorted.at(-1)!, 1)!,
              all: latencies.map((ms) => round(ms, 1)!),
            },
            responseMB: round(bytes / 1e6, 2)!,
            rssBeforeMiB: round(before, 1)!,
            rssPeakMiB: round(peak, 1)!,
            rssDeltaMiB: round(peak - before, 1)!,
          };
          size.variants.push(variant);
          ctx.progress(
            `${size.label}, ${format.label}, ${coding}: p50 ${variant.latencyMs.p50} ms, p95 ${variant.latencyMs.p95} ms, ${variant.responseMB} MB (${variant.wireMB} MB sent), API CPU ${variant.apiCpuMs} ms, RSS +${variant.rssDeltaMiB} MiB`,
          );
        }
    }
  } finally {
    sampler.stop();
    await api.stop();
  }
  if (api.warnings.length)
    problems.push(`the API logged ${api.warnings.length} warnings, first: ${JSON.stringify(api.warnings[0]).slice(0, 200)}`);

  const overallPeak = Math.max(...sizes.flatMap((size) => size.variants.map((variant) => variant.rssPeakMiB)));
  return {
    parameters: { videos: VIDEOS, runs: RUNS, sizes: SIZES, formats: FORMATS.map((format) => format.body), version: packageVersion },
    results: { apiIdleRssMiB: round(idle.rssMiB, 1), apiPeakRssMiB: round(overallPeak, 1), sizes },
    targets: [],
    ok: problems.length === 0,
    problems,
  };
}

/** A POST as a client that decodes nothing itself: the bytes sent, and what they decode to. */
function post(
  url: string,
  key: string,
  coding: string,
  body: string,
): Promise<{ status: number; coding: string | undefined; wire: number; decoded: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': key, 'Accept-Encoding': coding } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const sent = res.headers['content-encoding'];
          resolve({
            status: res.statusCode ?? 0,
            coding: sent,
            wire: raw.length,
            decoded: sent === 'br' ? brotliDecompressSync(raw) : sent === 'gzip' ? gunzipSync(raw) : raw,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const benchmark: Benchmark = {
  name: 'subtitles-bulk',
  title: "Bulk download of 100 videos' subtitles",
  description:
    "POST /api/subtitles/bulk-download with 100 video ids, against `afterimage api` in a child process: latency (p50/p95 of 7 runs), bytes sent, the API's CPU and RSS, for 30-minute and 2-hour auto captions, as JSON cues, JSON cues with a query, SRT in JSON (each uncoded, gzip and br) and a zip.",
  run,
};
