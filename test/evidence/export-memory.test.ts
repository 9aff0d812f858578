import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../core/status/keepObservations.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { watchPageHtml } from '../kit/servers/wayback-server.ts';
import { generatedVideoId } from '../kit/servers/youtube-api-server.ts';

const CHANNEL = 'UCevidencememorymemory01';
const VIDEO = generatedVideoId(CHANNEL, 0);
const OBSERVATIONS = 10_000;
const MAX_OVER_BASELINE = 64 * 1024 * 1024;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.begin((tx) =>
    upsertVideos(tx, 'youtube_api', [{ videoId: VIDEO, channelId: CHANNEL, title: 'Checked often', availability: 'live' as const }]),
  );
  // The watch page of a deleted video, a little different each time (as answers are), kept 10,000 times.
  const page = watchPageHtml({ playabilityStatus: { status: 'ERROR', reason: 'This video is unavailable' } });
  const rows = Array.from({ length: OBSERVATIONS }, (_, index) => {
    const body = Buffer.from(`${page}<!-- answer ${index} -->`);
    return {
      video_id: VIDEO,
      source: 'watch_page',
      request_url: `https://www.youtube.com/watch?v=${VIDEO}&hl=en`,
      observed_at: new Date(Date.UTC(2026, 0, 1) + index * 60_000),
      http_status: 200,
      content_type: 'text/html; charset=utf-8',
      decided: 'confirmation',
      said: 'ERROR: This video is unavailable',
      body_sha256: sha256Hex(body),
      body_size: body.length,
      body_gzip: gzipSync(body),
    };
  });
  for (let start = 0; start < rows.length; start += 1000)
    await db.sql`insert into evidence_observations ${db.sql(rows.slice(start, start + 1000))}`;
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

it(`exports a video with ${OBSERVATIONS} kept observations within 64 MB over the baseline, streamed`, async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...(process.env.PEAK_FLAGS ? process.env.PEAK_FLAGS.split(' ') : []), '--import', 'tsx', 'test/evidence/exportPeak.ts', db.url, VIDEO],
    {
      timeout: 120_000,
    },
  );
  const result = JSON.parse(stdout) as { peakOverBaseline: number; bytes: number };
  // The bundle holds every body: far more than the memory it may take.
  expect(result.bytes).toBeGreaterThan(OBSERVATIONS * 500);
  console.log(
    `evidence export of ${OBSERVATIONS} observations: ${result.bytes} bytes, peak RSS ${(result.peakOverBaseline / 2 ** 20).toFixed(1)} MB over baseline`,
  );
  expect(result.peakOverBaseline).toBeLessThanOrEqual(MAX_OVER_BASELINE);
}, 180_000);
