import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeTrack } from '../../core/subtitles/store.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { retryAfterSeconds } from '../../core/usage/consumeQuota.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { lockJob } from '../support/jobs.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let api: TestApi;
let tight: TestApi;
let key: string;
const channelId = channelIdFor('api');
const v = {
  full: videoIdFor('api-full'),
  german: videoIdFor('api-german'),
  bare: videoIdFor('api-bare'),
  versions: videoIdFor('api-versions'),
  never: videoIdFor('api-never'),
  joined: videoIdFor('api-joined'),
};
const unknown = videoIdFor('api-unknown');
const many = Array.from({ length: 100 }, (_, i) => videoIdFor(`api-many-${i}`));
const LIMIT = 100_000;

const fullManual = ['We restore the old Lathe today.', 'First, the Café break.', 'Then the bridge', 'collapsed into the river.'];

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { subtitleDownloadsPerDay: LIMIT, requestsPerMinute: 100_000 } });
  api = await startTestApi(db.sql);
  tight = await startTestApi(db.sql, { SUBTITLE_BULK_MAX_BYTES: '2048' });
  ({ key } = await createKeyedUser(db.sql));
  await addVideos(db.sql, channelId, [
    { videoId: v.full, title: 'Restoring a lathe' },
    { videoId: v.german, title: 'Eine Drehbank', language: 'de' },
    { videoId: v.bare, title: 'No subtitles yet' },
    { videoId: v.versions, title: 'Corrected captions' },
    { videoId: v.never },
    { videoId: v.joined },
    ...many.map((videoId, i) => ({ videoId, title: `Bulk video ${i}` })),
  ]);
  await addTrack(db.sql, { videoId: v.full, language: 'en', kind: 'manual', text: vttOf(fullManual) });
  await addTrack(db.sql, {
    videoId: v.full,
    language: 'en',
    kind: 'auto',
    text: vttOf(['we restore the old lathe today', 'first the cafe break']),
  });
  await addTrack(db.sql, { videoId: v.full, language: 'de', kind: 'manual', text: vttOf(['Wir restaurieren heute die alte Drehbank.']) });
  await addTrack(db.sql, { videoId: v.german, language: 'de', kind: 'auto', text: vttOf(['heute die drehbank', 'und eine lathe']) });
  await addTrack(db.sql, { videoId: v.versions, language: 'en', kind: 'manual', text: vttOf(['First version.']) });
  await addTrack(db.sql, { videoId: v.versions, language: 'en', kind: 'manual', text: vttOf(['Second version.']) });
  await db.sql.begin(async (tx) => {
    for (const [i, videoId] of many.entries()) {
      await storeTrack(tx, {
        videoId,
        language: 'en',
        kind: 'auto',
        source: 'archive',
        text: vttOf([`bulk line one of ${i}`, i % 10 === 0 ? 'the magic word' : 'nothing here']),
      });
    }
  });
});

afterAll(async () => {
  await tight?.close();
  await api?.close();
  await db?.drop();
});

const get = (path: string, options: { key?: string; api?: TestApi } = {}) => (options.api ?? api).call(path, { key: options.key ?? key });
const post = (path: string, body?: unknown, options: { key?: string; api?: TestApi } = {}) =>
  (options.api ?? api).call(path, {
    method: 'POST',
    key: options.key ?? key,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });

describe('GET /api/subtitles/:videoId', () => {
  it('sends SRT by default, as a download named <videoId>.<lang>.srt', async () => {
    const response = await get(`/api/subtitles/${v.full}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${v.full}.en.srt"`);
    expect(response.headers.get('x-subtitle-kind')).toBe('manual');
    expect(response.headers.get('x-subtitle-version')).toBe('1');
    expect(response.headers.get('ratelimit-limit')).toBe(String(LIMIT));
    expect(response.body).toBe(
      '1\n00:00:00,000 --> 00:00:03,000\nWe restore the old Lathe today.\n\n2\n00:00:03,000 --> 00:00:06,000\nFirst, the Café break.\n\n3\n00:00:06,000 --> 00:00:09,000\nThen the bridge\n\n4\n00:00:09,000 --> 00:00:12,000\ncollapsed into the river.\n',
    );
  });

  it('sends WebVTT and plain text when asked', async () => {
    const vtt = await get(`/api/subtitles/${v.full}?format=vtt`);
    expect(vtt.status).toBe(200);
    expect(vtt.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    expect(vtt.headers.get('content-disposition')).toBe(`attachment; filename="${v.full}.en.vtt"`);
    expect(vtt.body.startsWith('WEBVTT\n\n00:00:00.000 --> 00:00:03.000\nWe restore the old Lathe today.\n')).toBe(true);
    const txt = await get(`/api/subtitles/${v.full}?format=txt`);
    expect(txt.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(txt.headers.get('content-disposition')).toBe(`attachment; filename="${v.full}.en.txt"`);
    expect(txt.body).toBe(`${fullManual.join('\n')}\n`);
  });

  it('filters by lang and kind', async () => {
    const german = await get(`/api/subtitles/${v.full}?lang=de`);
    expect(german.status).toBe(200);
    expect(german.headers.get('content-disposition')).toBe(`attachment; filename="${v.full}.de.srt"`);
    expect(german.body).toContain('Drehbank');
    const auto = await get(`/api/subtitles/${v.full}?kind=auto&format=txt`);
    expect(auto.headers.get('x-subtitle-kind')).toBe('auto');
    expect(auto.body).toBe('we restore the old lathe today\nfirst the cafe break\n');
    // The video's own language when nothing is asked for, but manual before auto.
    const own = await get(`/api/subtitles/${v.german}`);
    expect(own.headers.get('content-disposition')).toBe(`attachment; filename="${v.german}.de.srt"`);
  });

  it('reads older versions with version=', async () => {
    const latest = await get(`/api/subtitles/${v.versions}?format=txt`);
    expect(latest.body).toBe('Second version.\n');
    expect(latest.headers.get('x-subtitle-version')).toBe('2');
    const first = await get(`/api/subtitles/${v.versions}?format=txt&version=1`);
    expect(first.body).toBe('First version.\n');
    const none = await get(`/api/subtitles/${v.versions}?version=3`);
    expect(none.status).toBe(404);
    expect(none.body.error.message).toMatch(/versions 1 to 2/);
  });

  it('answers 400 INVALID_INPUT naming the parameter for another format, a bad id or a bad filter', async () => {
    for (const format of ['ass', 'SRT', 'json', '']) {
      const response = await get(`/api/subtitles/${v.full}?format=${format}`);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('INVALID_INPUT');
      expect(response.body.error.message).toMatch(/^format: /);
    }
    for (const id of ['short', 'waytoolongvideoid', 'abc%24efghijk', 'abcdefghij%21']) {
      const response = await get(`/api/subtitles/${id}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_INPUT' });
      expect(response.body.error.message).toMatch(/^videoId: /);
    }
    expect((await get(`/api/subtitles/${v.full}?kind=robot`)).body.error.message).toMatch(/^kind: /);
    expect((await get(`/api/subtitles/${v.full}?lang=e%20n`)).body.error.message).toMatch(/^lang: /);
    expect((await get(`/api/subtitles/${v.full}?version=x`)).body.error.message).toMatch(/^version: /);
    expect((await get(`/api/subtitles/${v.full}?language=en`)).body.error.message).toMatch(/language: unknown parameter/);
  });

  it('answers 404 NOT_FOUND for an unknown video, a video without subtitles and a track that is not there', async () => {
    const missing = await get(`/api/subtitles/${unknown}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    const bare = await get(`/api/subtitles/${v.bare}`);
    expect(bare.status).toBe(404);
    expect(bare.body.error.message).toMatch(/no subtitles stored.*\/fetch/);
    const french = await get(`/api/subtitles/${v.full}?lang=fr`);
    expect(french.status).toBe(404);
    expect(french.body.error.message).toBe(`video ${v.full} has no subtitles in fr; it has de (manual), en (auto), en (manual)`);
    const translated = await get(`/api/subtitles/${v.full}?lang=de&kind=auto`);
    expect(translated.status).toBe(404);
  });

  it('counts one subtitle download per file sent, and none for a refusal', async () => {
    const { key: fresh } = await createKeyedUser(db.sql);
    const first = await get(`/api/subtitles/${v.full}`, { key: fresh });
    expect(first.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1));
    await get(`/api/subtitles/${v.bare}`, { key: fresh });
    await get(`/api/subtitles/${v.full}?format=nope`, { key: fresh });
    const second = await get(`/api/subtitles/${v.full}?format=vtt`, { key: fresh });
    expect(second.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 2));
  });

  it('needs a key', async () => {
    const response = await api.call(`/api/subtitles/${v.full}`);
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('API_KEY_REQUIRED');
  });
});

const jobsFor = (videoId: string) =>
  db.sql<{ id: string; revision: number; lockedBy: string | null; queueName: string | null; priority: number }[]>`
    select j.id::text, j.revision, j.locked_by as "lockedBy", q.queue_name as "queueName", j.priority
    from graphile_worker._private_jobs j left join graphile_worker._private_job_queues q on q.id = j.job_queue_id
    where j.key = ${`subtitles:${videoId}`}`;

describe('POST /api/subtitles/:videoId/fetch and GET …/status', () => {
  it('answers 200 with the tracks when they are stored', async () => {
    const response = await post(`/api/subtitles/${v.full}/fetch`);
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ status: 'available', videoId: v.full });
    expect(response.body.data.tracks.map((track: { language: string; kind: string }) => `${track.language}/${track.kind}`)).toEqual([
      'de/manual',
      'en/auto',
      'en/manual',
    ]);
    expect(response.body.data.tracks[2]).toMatchObject({
      source: 'archive',
      format: 'vtt',
      version: 1,
      cueCount: 4,
      url: `/api/subtitles/${v.full}?lang=en&kind=manual`,
    });
    expect(await jobsFor(v.full)).toHaveLength(0);
  });

  it('queues one job and answers 202 with a poll URL; repeated calls join it', async () => {
    const first = await post(`/api/subtitles/${v.bare}/fetch`);
    expect(first.status).toBe(202);
    expect(first.body.data).toEqual({ status: 'pending', videoId: v.bare, pollUrl: `/api/subtitles/${v.bare}/status` });
    expect(first.headers.get('location')).toBe(`/api/subtitles/${v.bare}/status`);
    const [job] = await jobsFor(v.bare);
    expect(job).toMatchObject({ queueName: null, priority: 0 });
    const again = await post(`/api/subtitles/${v.bare}/fetch`);
    expect(again.status).toBe(202);
    const jobs = await jobsFor(v.bare);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.id).toBe(job!.id);
    const status = await get(`/api/subtitles/${v.bare}/status`);
    expect(status.status).toBe(200);
    expect(status.body.data).toMatchObject({
      videoId: v.bare,
      status: 'pending',
      tracks: [],
      transcript: { state: 'pending', error: null },
    });
    expect(status.body.data.transcript.requestedAt).toEqual(expect.any(String));
  });

  it('joins a job that is already running instead of starting another', async () => {
    await post(`/api/subtitles/${v.joined}/fetch`);
    const [job] = await jobsFor(v.joined);
    await lockJob(db.sql, job!.id, 'worker-running-it', 5);
    const again = await post(`/api/subtitles/${v.joined}/fetch`);
    expect(again.status).toBe(202);
    const jobs = await jobsFor(v.joined);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ id: job!.id, lockedBy: 'worker-running-it' });
  });

  it('reports available, none and 404 on the status endpoint', async () => {
    const available = await get(`/api/subtitles/${v.full}/status`);
    expect(available.body.data).toMatchObject({ status: 'available', transcript: { state: 'none' } });
    expect(available.body.data.tracks).toHaveLength(3);
    const never = await get(`/api/subtitles/${v.never}/status`);
    expect(never.body.data).toEqual({
      videoId: v.never,
      status: 'none',
      tracks: [],
      transcript: { state: 'none', language: null, kind: null, version: null, error: null, requestedAt: null, checkedAt: null },
    });
    expect((await get(`/api/subtitles/${unknown}/status`)).status).toBe(404);
    expect((await get('/api/subtitles/nope/status')).status).toBe(400);
  });

  it('answers 400 for a bad id (an unknown one is looked up: fetch-unknown.test.ts), and needs an L2 key', async () => {
    expect((await post('/api/subtitles/not-an-id/fetch')).status).toBe(400);
    const { key: reader } = await createKeyedUser(db.sql, { scope: 'L1' });
    const refused = await post(`/api/subtitles/${v.never}/fetch`, undefined, { key: reader });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect((await get(`/api/subtitles/${v.full}`, { key: reader })).status).toBe(200);
  });
});

describe('POST /api/subtitles/bulk-download', () => {
  it('answers JSON per video with cues, marks the cues the query matches, and lists what is missing and why', async () => {
    const response = await post('/api/subtitles/bulk-download', { videoIds: [v.full, v.german, v.bare, unknown, v.full], query: 'LATHE' });
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data.format).toBe('json');
    expect(data.query).toBe('LATHE');
    expect(data.videos.map((video: { videoId: string }) => video.videoId)).toEqual([v.full, v.german]);
    const full = data.videos[0];
    expect(full).toMatchObject({
      videoId: v.full,
      title: 'Restoring a lathe',
      channelId,
      channelTitle: 'Subtitle Channel',
      matchCount: 1,
      track: { language: 'en', kind: 'manual', version: 1 },
    });
    expect(full.cues[0]).toEqual({
      startMs: 0,
      endMs: 3000,
      start: '00:00:00.000',
      end: '00:00:03.000',
      text: 'We restore the old Lathe today.',
      match: true,
    });
    expect(full.cues[1]).toEqual({
      startMs: 3000,
      endMs: 6000,
      start: '00:00:03.000',
      end: '00:00:06.000',
      text: 'First, the Café break.',
    });
    expect(data.videos[1]).toMatchObject({ matchCount: 1, track: { language: 'de', kind: 'auto' } });
    expect(data.missing).toEqual([
      { videoId: v.bare, reason: 'no_subtitles', message: expect.stringContaining('/fetch') },
      { videoId: unknown, reason: 'unknown_video', message: `no video ${unknown} is stored` },
    ]);
    expect(data.totals).toEqual({ requested: 4, returned: 2, missing: 2, cues: 6, matches: 2, textBytes: expect.any(Number) });
  });

  it('folds accents and finds phrases across cues', async () => {
    const response = await post('/api/subtitles/bulk-download', { videoIds: [v.full], query: 'cafe' });
    expect(
      response.body.data.videos[0].cues.filter((cue: { match?: boolean }) => cue.match).map((cue: { text: string }) => cue.text),
    ).toEqual(['First, the Café break.']);
    const phrase = await post('/api/subtitles/bulk-download', { videoIds: [v.full], query: 'bridge collapsed' });
    expect(
      phrase.body.data.videos[0].cues.filter((cue: { match?: boolean }) => cue.match).map((cue: { start: string }) => cue.start),
    ).toEqual(['00:00:06.000', '00:00:09.000']);
  });

  it('renders each video as SRT, WebVTT or text in JSON, with the matches listed', async () => {
    const response = await post('/api/subtitles/bulk-download', { videoIds: [v.full, v.versions], format: 'srt', query: 'river' });
    expect(response.status).toBe(200);
    const [full, versions] = response.body.data.videos;
    expect(full.text).toBe((await get(`/api/subtitles/${v.full}`)).body);
    expect(full.cues).toBeUndefined();
    expect(full.matches).toEqual([
      { startMs: 9000, endMs: 12000, start: '00:00:09.000', end: '00:00:12.000', text: 'collapsed into the river.' },
    ]);
    expect(versions).toMatchObject({ matchCount: 0, matches: [], text: expect.stringContaining('Second version.') });
    const vtt = await post('/api/subtitles/bulk-download', { videoIds: [v.full], format: 'vtt' });
    expect(vtt.body.data.videos[0].text.startsWith('WEBVTT')).toBe(true);
    expect(vtt.body.data.videos[0].matches).toBeUndefined();
  });

  it('applies lang and kind to every video, listing those without such a track', async () => {
    const response = await post('/api/subtitles/bulk-download', { videoIds: [v.full, v.german, v.versions], lang: 'de' });
    expect(
      response.body.data.videos.map(
        (video: { videoId: string; track: { language: string } }) => `${video.videoId}:${video.track.language}`,
      ),
    ).toEqual([`${v.full}:de`, `${v.german}:de`]);
    expect(response.body.data.missing).toEqual([
      { videoId: v.versions, reason: 'no_matching_track', message: 'no subtitles in de; it has en (manual)' },
    ]);
  });

  it('sends a zip of files and a manifest when asked', async () => {
    const response = await fetch(`${api.url}/api/subtitles/bulk-download`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ videoIds: [v.full, v.german, unknown], format: 'zip', query: 'lathe' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="subtitles-2-videos.zip"');
    const files = unzipSync(new Uint8Array(await response.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual([`${v.full}.en.srt`, `${v.german}.de.srt`, 'manifest.json'].sort());
    expect(strFromU8(files[`${v.full}.en.srt`]!)).toBe((await get(`/api/subtitles/${v.full}`)).body);
    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    expect(manifest).toMatchObject({
      format: 'zip',
      fileFormat: 'srt',
      query: 'lathe',
      missing: [{ videoId: unknown, reason: 'unknown_video' }],
      totals: { returned: 2, matches: 2 },
    });
    expect(manifest.videos[0]).toMatchObject({
      videoId: v.full,
      file: `${v.full}.en.srt`,
      matchCount: 1,
      matches: [{ start: '00:00:00.000', text: 'We restore the old Lathe today.' }],
    });

    const vtt = await fetch(`${api.url}/api/subtitles/bulk-download`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ videoIds: [v.versions], format: 'zip', fileFormat: 'vtt' }),
    });
    const vttFiles = unzipSync(new Uint8Array(await vtt.arrayBuffer()));
    expect(strFromU8(vttFiles[`${v.versions}.en.vtt`]!)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:03.000\nSecond version.\n');
  });

  it('downloads 100 videos at once', async () => {
    const response = await post('/api/subtitles/bulk-download', { videoIds: many, query: 'magic word' });
    expect(response.status).toBe(200);
    expect(response.body.data.totals).toMatchObject({ requested: 100, returned: 100, missing: 0, matches: 10 });
    expect(response.body.data.videos.map((video: { videoId: string }) => video.videoId)).toEqual(many);
  });

  it('refuses more than 100 ids, none, malformed ones and mismatched options with 400 INVALID_INPUT', async () => {
    const tooMany = await post('/api/subtitles/bulk-download', { videoIds: [...many, v.full] });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: 'INVALID_INPUT', message: 'videoIds: at most 100 video ids per request' });
    expect((await post('/api/subtitles/bulk-download', { videoIds: [] })).body.error.message).toMatch(/^videoIds: /);
    expect((await post('/api/subtitles/bulk-download', {})).body.error.message).toMatch(/^videoIds: /);
    expect((await post('/api/subtitles/bulk-download', { videoIds: [v.full, 'nope'] })).body.error.message).toMatch(/^videoIds\.1: /);
    expect((await post('/api/subtitles/bulk-download', { videoIds: [v.full], format: 'pdf' })).body.error.message).toMatch(/^format: /);
    expect((await post('/api/subtitles/bulk-download', { videoIds: [v.full], fileFormat: 'vtt' })).body.error.message).toMatch(
      /^fileFormat: /,
    );
    expect((await post('/api/subtitles/bulk-download', { videoIds: [v.full], query: ' ' })).body.error.message).toMatch(/^query: /);
    expect((await post('/api/subtitles/bulk-download', { videoIds: [v.full], extra: 1 })).body.error.message).toMatch(
      /extra: unknown field/,
    );
  });

  it('refuses a download whose text is over the size limit with 400 INVALID_INPUT, counting nothing', async () => {
    const { key: fresh } = await createKeyedUser(db.sql);
    const small = await post('/api/subtitles/bulk-download', { videoIds: [v.versions] }, { api: tight, key: fresh });
    expect(small.status).toBe(200);
    const large = await post('/api/subtitles/bulk-download', { videoIds: many }, { api: tight, key: fresh });
    expect(large.status).toBe(400);
    expect(large.body.error.code).toBe('INVALID_INPUT');
    expect(large.body.error.message).toMatch(/^videoIds: these subtitles hold \d+ bytes of text, more than the 2048 bytes/);
    const after = await get(`/api/subtitles/${v.full}`, { key: fresh, api: tight });
    expect(after.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 2));
  });

  it('counts one download per video sent and refuses with 429 when the quota cannot cover them all', async () => {
    await updateTier(db.sql, 'pro', { limits: { subtitleDownloadsPerDay: 5 } });
    try {
      const { key: fresh } = await createKeyedUser(db.sql);
      const three = await post('/api/subtitles/bulk-download', { videoIds: [...many.slice(0, 3), unknown] }, { key: fresh });
      expect(three.status).toBe(200);
      expect(three.headers.get('ratelimit-remaining')).toBe('2');
      const refused = await post('/api/subtitles/bulk-download', { videoIds: many.slice(3, 6) }, { key: fresh });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(refused.body.error.message).toMatch(
        /^Limit reached: this request needs 3 subtitle downloads and 2 remain; 5 subtitle downloads per day/,
      );
      expect(refused.body.error.details).toMatchObject({ limit: 'subtitleDownloadsPerDay', units: 3, remaining: 2 });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const tooMany = await post('/api/subtitles/bulk-download', { videoIds: many.slice(0, 6) }, { key: fresh });
      expect(tooMany.status).toBe(429);
      expect(tooMany.body.error.message).toMatch(/more than the 5 per day/);
      // Nothing was counted for the refusals: two single downloads still fit, the third does not.
      expect((await get(`/api/subtitles/${v.full}`, { key: fresh })).status).toBe(200);
      expect((await get(`/api/subtitles/${v.full}`, { key: fresh })).status).toBe(200);
      const over = await get(`/api/subtitles/${v.full}`, { key: fresh });
      expect(over.status).toBe(429);
      expect(over.body.error.message).toMatch(/^Limit reached: 5 subtitle downloads per day \(subtitleDownloadsPerDay\)/);
      // A request with nothing to send costs nothing.
      expect((await post('/api/subtitles/bulk-download', { videoIds: [unknown] }, { key: fresh })).status).toBe(200);
    } finally {
      await updateTier(db.sql, 'pro', { limits: { subtitleDownloadsPerDay: LIMIT } });
    }
  });
});

describe('waiting for several units of a quota', () => {
  const rule = {
    name: 'subtitleDownloadsPerDay',
    description: '',
    unit: 'subtitle downloads',
    window: 'sliding',
    windowSeconds: 86_400,
    countedPer: 'user',
    max: 5,
  } as const;

  it('waits until all of them fit, and a whole window when they never can', () => {
    // 3 used in this half-elapsed bucket, none before: one more fits now, three only in the next bucket.
    expect(retryAfterSeconds(rule, { used: 5, previous: 0, elapsed: 0.5 }, 1)).toBe(43_200);
    expect(retryAfterSeconds(rule, { used: 3, previous: 0, elapsed: 0.5 }, 3)).toBe(43_200);
    // 6 of the previous bucket's 8 still count: 2 units fit once 4 of them slid out (elapsed past 0.5), 1 unit past 0.375.
    expect(retryAfterSeconds(rule, { used: 0, previous: 8, elapsed: 0.25 }, 2)).toBe(21_600);
    expect(retryAfterSeconds(rule, { used: 0, previous: 8, elapsed: 0.25 }, 1)).toBe(10_800);
    expect(retryAfterSeconds(rule, { used: 0, previous: 8, elapsed: 0.25 })).toBe(10_800);
    expect(retryAfterSeconds(rule, { used: 0, previous: 0, elapsed: 0.5 }, 6)).toBe(43_200 + 86_400);
  });
});

describe('the OpenAPI document', () => {
  it('lists the subtitle endpoints', async () => {
    const response = await api.call('/api/openapi.json');
    const paths = Object.keys(response.body.paths);
    for (const path of [
      '/api/subtitles/{videoId}',
      '/api/subtitles/{videoId}/fetch',
      '/api/subtitles/{videoId}/status',
      '/api/subtitles/bulk-download',
    ])
      expect(paths).toContain(path);
  });
});
