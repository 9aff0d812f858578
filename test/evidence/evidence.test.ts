import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex as sha256 } from '../../core/status/keepObservations.ts';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle } from '../../core/evidence/verifyBundle.ts';
import { combineProbes, dataApiProbe, watchPageProbe, type StatusProbe } from '../../core/status/probes.ts';
import { recordObservations } from '../../core/status/recordObservations.ts';
import { storeTrack } from '../../core/subtitles/store.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { cleanupTask } from '../../pipeline/tasks/cleanup.ts';
import { createKeyedUser, createSignedInUser, startTestApi, type TestApi } from '../support/api.ts';
import { runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { watchPageHtml } from '../kit/servers/wayback-server.ts';
import { generatedVideoId, start as startYoutubeApi, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';

const CHANNEL = 'UCevidenceevidenceevid01';
const API_KEY = 'evidence-secret-key';
const schedule = { confirmMinutes: 60, recheckDays: 30 };
/** The platform's answer for a deleted video (as in the real youtube_video_unavailable fixture). */
const unavailablePlayer = {
  playabilityStatus: {
    status: 'ERROR',
    reason: 'This video is unavailable',
    errorScreen: { playerErrorMessageRenderer: { reason: { runs: [{ text: 'This video is unavailable' }] } } },
  },
};

const gonePages = new Set<string>();
let web: Server;
let youtube: YoutubeApiServer;
let db: TestDatabase;
let api: TestApi;
let key: string;
let probe: StatusProbe;
const video = (index: number) => generatedVideoId(CHANNEL, index);

beforeAll(async () => {
  db = await createTestDatabase();
  youtube = await startYoutubeApi({ apiKey: API_KEY });
  youtube.createChannel({ channelId: CHANNEL, handle: '@evidence', title: 'Evidence channel', videoCount: 3 });
  web = createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('v') ?? '';
    const player = gonePages.has(id)
      ? unavailablePlayer
      : { playabilityStatus: { status: 'OK' }, videoDetails: { videoId: id, title: 'x' } };
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(watchPageHtml(player));
  });
  await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
  const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  probe = combineProbes({
    dataApi: dataApiProbe({ apiKey: API_KEY, baseUrl: youtube.url, fetchOptions: { retries: 0, timeoutMs: 5_000 } }),
    reasons: watchPageProbe({ webUrl, fetchOptions: { retries: 0, timeoutMs: 5_000 } }),
  })!;
  await db.sql.begin((tx) =>
    upsertVideos(
      tx,
      'youtube_api',
      [0, 1, 2].map((index) => ({
        videoId: video(index),
        channelId: CHANNEL,
        title: `Evidence video ${index}`,
        durationSeconds: 300,
        availability: 'live' as const,
      })),
    ),
  );
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
  // Video 0 is deleted: suspected, then confirmed an hour later; video 1 stays live.
  youtube.setVideoState(video(0), 'deleted');
  gonePages.add(video(0));
  await check([video(0), video(1)]);
  await db.sql`update video_checks set suspected_at = now() - interval '61 minutes' where video_id = ${video(0)}`;
  await check([video(0), video(1)]);
  await check([video(0)]);
  await db.sql.begin((tx) =>
    storeTrack(tx, {
      videoId: video(0),
      language: 'en',
      kind: 'manual',
      source: 'archive',
      text: 'WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nThe lathe, before it was gone.\n',
    }),
  );
  await db.sql`
    insert into summaries (video_id, channel_id, status, title, tldr, key_points, detailed_summary, language, llm_model, generated_at)
    values (${video(0)}, ${CHANNEL}, 'generated', 'A lathe', 'A lathe is restored.', '[]', 'Restoring a lathe.', 'en', 'afterimage-extractive-1', now())`;
});

afterAll(async () => {
  await api?.close();
  await new Promise((done) => web?.close(done));
  await youtube?.close();
  await db?.drop();
});

const check = (videoIds: string[]) => db.sql.begin(async (tx) => recordObservations(tx, await probe(videoIds), schedule));

async function download(path: string, withKey = key): Promise<{ status: number; bytes: Uint8Array; type: string | null }> {
  const response = await fetch(`${api.url}${path}`, { headers: { 'X-API-Key': withKey } });
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()), type: response.headers.get('content-type') };
}

describe('kept observations', () => {
  it('keeps the answers that suspected, changed and confirmed a status, linked to the history; counts the rest', async () => {
    const kept = await db.sql`
      select decided, source, request_url, http_status, content_type, body_sha256, body_size, body_gzip, status_history_id, said
      from evidence_observations where video_id = ${video(0)} order by id`;
    expect(kept.map((row) => row.decided)).toEqual(['suspected', 'status_change', 'confirmation']);
    const [deletion] = await db.sql`select id from video_status_history where video_id = ${video(0)} and status = 'deleted'`;
    expect(kept.slice(0, 2).map((row) => row.status_history_id)).toEqual([deletion!.id, deletion!.id]);
    for (const row of kept) {
      expect(row).toMatchObject({ source: 'watch_page', http_status: 200, content_type: 'text/html; charset=utf-8' });
      expect(row.request_url).toBe(`https://www.youtube.com/watch?v=${video(0)}&hl=en`);
      const body = gunzipSync(row.body_gzip);
      expect([sha256(body), body.length]).toEqual([row.body_sha256, row.body_size]);
      expect(body.toString()).toContain('This video is unavailable');
    }
    // The live video's answers were counted, not kept.
    expect(await db.sql`select 1 from evidence_observations where video_id = ${video(1)}`).toHaveLength(0);
    const [counted] = await db.sql`select unkept_observations from video_checks where video_id = ${video(1)}`;
    expect(counted!.unkept_observations).toBe(2);
  });

  it('keeps the Data API request without its key', async () => {
    youtube.setVideoState(video(2), 'deleted');
    const dataApiOnly = dataApiProbe({ apiKey: API_KEY, baseUrl: youtube.url, fetchOptions: { retries: 0 } });
    await db.sql.begin(async (tx) => recordObservations(tx, await dataApiOnly([video(2)]), schedule));
    const [row] = await db.sql`select request_url, decided, body_gzip from evidence_observations where video_id = ${video(2)}`;
    expect(row!.decided).toBe('suspected');
    expect(row!.request_url).toMatch(/^https:\/\/www\.googleapis\.com\/.*videos\?.*key=\*\*\*/);
    expect(row!.request_url).not.toContain(API_KEY);
    expect(JSON.parse(gunzipSync(row!.body_gzip).toString())).toMatchObject({ items: [] });
  });

  it('serves a raw answer as plain text to a key, 404 for another video', async () => {
    const [row] = await db.sql`select id::text from evidence_observations where video_id = ${video(0)} order by id limit 1`;
    const answer = await api.call(`/api/videos/${video(0)}/evidence/${row!.id}`, { key });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(answer.headers.get('x-original-content-type')).toBe('text/html; charset=utf-8');
    expect(answer.body).toContain('This video is unavailable');
    expect((await api.call(`/api/videos/${video(1)}/evidence/${row!.id}`, { key })).status).toBe(404);
    expect((await api.call(`/api/videos/${video(0)}/evidence/${row!.id}`)).status).toBe(401);
  });
});

describe('evidence bundles', () => {
  it('exports a ZIP that verifies, the same bytes twice, with the history the API shows', async () => {
    const first = await download(`/api/videos/${video(0)}/evidence`);
    const second = await download(`/api/videos/${video(0)}/evidence`);
    expect(first.status).toBe(200);
    expect(first.type).toBe('application/zip');
    expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true);
    const files = unzipSync(first.bytes);
    const names = Object.keys(files);
    expect(names.slice(0, 3)).toEqual(['video.json', 'status-history.json', 'metadata-versions.json']);
    expect(names.slice(-2)).toEqual(['manifest.json', 'README.txt']);
    expect(names.filter((name) => name.startsWith('observations/'))).toHaveLength(6);
    const manifest = JSON.parse(Buffer.from(files['manifest.json']!).toString());
    expect(manifest.format).toBe('afterimage-evidence/1');
    expect(Buffer.from(files['README.txt']!).toString().split('\n')[0]).toBe(sha256(files['manifest.json']!));
    const history = await api.call(`/api/videos/${video(0)}/status-history`, { key });
    expect(JSON.parse(Buffer.from(files['status-history.json']!).toString())).toEqual(history.body.data);

    const verdict = await verifyBundle(bufferBytes(first.bytes));
    expect(verdict).toMatchObject({ ok: true, problems: [], manifestSha256: sha256(files['manifest.json']!) });
  });

  it('fails naming the file when one byte of any kind of file changes, or a file is missing or added', async () => {
    const { bytes } = await download(`/api/videos/${video(0)}/evidence`);
    const files = unzipSync(bytes);
    const kinds = [
      'video.json',
      'status-history.json',
      'metadata-versions.json',
      'subtitles/en.manual.v1.vtt',
      'subtitle-versions.json',
      'summary.json',
      Object.keys(files).find((name) => name.endsWith('.body.gz'))!,
      Object.keys(files).find((name) => /^observations\/\d+\.json$/.test(name))!,
      'manifest.json',
      'README.txt',
    ];
    for (const name of kinds) {
      const changed = { ...files, [name]: Uint8Array.from(files[name]!) };
      const at = Math.floor(changed[name]!.length / 2);
      changed[name]![at] = changed[name]![at]! ^ 0x01;
      const verdict = await verifyBundle(bufferBytes(zipSync(changed)));
      expect(verdict.ok, name).toBe(false);
      expect(
        verdict.problems.map((problem) => problem.file),
        name,
      ).toContain(name === 'manifest.json' ? 'README.txt' : name);
    }
    const { 'video.json': _dropped, ...missing } = files;
    expect((await verifyBundle(bufferBytes(zipSync(missing)))).problems).toEqual([
      { file: 'video.json', problem: 'is listed in manifest.json but missing' },
    ]);
    const added = await verifyBundle(bufferBytes(zipSync({ ...files, 'extra.txt': new TextEncoder().encode('hi') })));
    expect(added.problems).toEqual([{ file: 'extra.txt', problem: 'is not listed in manifest.json (added)' }]);
  });

  it('counts a bundle as a subtitle download and answers 404 for an unknown video', async () => {
    const used = async () =>
      Number(
        (await db.sql`select coalesce(sum(used), 0) as used from usage_counters where limit_name = 'subtitleDownloadsPerDay'`)[0]!.used,
      );
    const before = await used();
    await download(`/api/videos/${video(0)}/evidence`);
    expect((await used()) - before).toBe(1);
    const unknown = await api.call(`/api/videos/${generatedVideoId(CHANNEL, 99)}/evidence`, { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });
});

describe('afterimage evidence verify', () => {
  it('prints its usage on --help, says intact for a real bundle and names the changed file of a bad one', async () => {
    const help = await runCli(['evidence', '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^usage: afterimage evidence verify <bundle\.zip>/);
    const folder = await mkdtemp(join(tmpdir(), 'evidence-'));
    try {
      const { bytes } = await download(`/api/videos/${video(0)}/evidence`);
      await writeFile(join(folder, 'good.zip'), bytes);
      const good = await runCommand(['evidence', 'verify', join(folder, 'good.zip')]);
      expect(good.code).toBe(0);
      expect(good.stdout).toMatch(/^intact: \d+ files match manifest\.json/);
      const files = unzipSync(bytes);
      files['status-history.json'] = new TextEncoder().encode(
        Buffer.from(files['status-history.json']!).toString().replace('"deleted"', '"private"'),
      );
      await writeFile(join(folder, 'bad.zip'), zipSync(files));
      const bad = await runCommand(['evidence', 'verify', join(folder, 'bad.zip'), '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout).problems).toContainEqual(expect.objectContaining({ file: 'status-history.json' }));
      const missing = await runCommand(['evidence', 'verify', join(folder, 'none.zip')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/cannot read .*none\.zip/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('evidence on the website', () => {
  it("shows each kept answer once on the video page, with the raw answer and the bundle behind the visitor's session", async () => {
    const person = await createSignedInUser(db.sql);
    const headers = { Accept: 'text/html', Cookie: person.cookie };
    const html = await (await fetch(`${api.url}/videos/${video(0)}`, { headers })).text();
    expect(html).not.toContain('then:');
    // Suspicion, change, confirmation: each answer once, not the history's one-line summary besides.
    expect(html.match(/view the raw answer/g)).toHaveLength(3);
    expect(html.match(/<q class="evidence">ERROR: /g)).toHaveLength(3);
    expect(html).not.toMatch(/<p class="evidence">ERROR: /);
    expect(html).toContain("YouTube's watch page said");
    expect(html).toContain(`href="/videos/${video(0)}/evidence.zip"`);
    const rawLink = new RegExp(`href="(/videos/${video(0)}/evidence/\\d+)"`).exec(html)![1]!;
    const raw = await fetch(`${api.url}${rawLink}`, { headers });
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await raw.text()).toContain('This video is unavailable');
    const zip = await fetch(`${api.url}/videos/${video(0)}/evidence.zip`, { headers });
    expect(zip.headers.get('content-type')).toBe('application/zip');
    expect((await verifyBundle(bufferBytes(new Uint8Array(await zip.arrayBuffer())))).ok).toBe(true);
  });

  it('checks an uploaded bundle at /evidence/verify, naming a changed file', async () => {
    const form = await fetch(`${api.url}/evidence/verify`, { headers: { Accept: 'text/html' } });
    const cookie = (form.headers.getSetCookie?.() ?? []).map((line) => line.split(';')[0]).join('; ');
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const upload = async (bundle: Uint8Array) => {
      const body = new FormData();
      body.set('_csrf', token);
      body.set('bundle', new Blob([Buffer.from(bundle)], { type: 'application/zip' }), 'bundle.zip');
      const answer = await fetch(`${api.url}/evidence/verify`, { method: 'POST', headers: { Accept: 'text/html', Cookie: cookie }, body });
      return { status: answer.status, html: await answer.text() };
    };
    const { bytes } = await download(`/api/videos/${video(0)}/evidence`);
    const good = await upload(bytes);
    expect(good.status).toBe(200);
    expect(good.html).toContain('Intact.');
    const files = unzipSync(bytes);
    files['video.json']![3] = files['video.json']![3]! ^ 1;
    const bad = await upload(zipSync(files));
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/<code>video\.json<\/code> was changed/);
  });
});

describe('watchlist bundles and retention', () => {
  it("exports the owner's watchlist with each video under videos/<id>/, 404 for anyone else", async () => {
    const owner = await createKeyedUser(db.sql);
    const created = await api.call('/api/watchlists', {
      key: owner.key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Gone lathes' }),
    });
    const id = (created.body as { data: { id: string } }).data.id;
    const added = await api.call(`/api/watchlists/${id}/items`, {
      key: owner.key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'video', videoId: video(0) }),
    });
    expect(added.status).toBe(201);
    const bundle = await download(`/api/watchlists/${id}/evidence`, owner.key);
    expect(bundle.status).toBe(200);
    const names = Object.keys(unzipSync(bundle.bytes));
    expect(names).toContain(`videos/${video(0)}/status-history.json`);
    expect(names.filter((name) => name.startsWith(`videos/${video(0)}/observations/`)).length).toBeGreaterThan(0);
    expect(await verifyBundle(bufferBytes(bundle.bytes))).toMatchObject({ ok: true });
    const stranger = await api.call(`/api/watchlists/${id}/evidence`, { key });
    expect(stranger.status).toBe(404);
    // The watchlists page links the same bundle, behind the owner's session.
    const session = await createSignedInUser(db.sql);
    await db.sql`update watchlists set owner_id = ${session.user.id}::uuid where id = ${id}::uuid`;
    const headers = { Accept: 'text/html', Cookie: session.cookie };
    expect(await (await fetch(`${api.url}/watchlists`, { headers })).text()).toContain(`href="/watchlists/${id}/evidence.zip"`);
    const page = await fetch(`${api.url}/watchlists/${id}/evidence.zip`, { headers });
    expect(page.headers.get('content-type')).toBe('application/zip');
    expect((await verifyBundle(bufferBytes(new Uint8Array(await page.arrayBuffer())))).ok).toBe(true);
  });

  it('drops kept answers older than EVIDENCE_RETENTION_DAYS in the hourly cleanup, and none without it', async () => {
    const helpers = { logger: { info: () => {} } } as unknown as Parameters<ReturnType<typeof cleanupTask>>[1];
    const before = (await db.sql`select count(*)::int from evidence_observations`)[0]!.count as number;
    await db.sql`update evidence_observations set recorded_at = now() - interval '40 days' where video_id = ${video(2)}`;
    await cleanupTask(db.sql, undefined)({}, helpers);
    expect((await db.sql`select count(*)::int from evidence_observations`)[0]!.count).toBe(before);
    await cleanupTask(db.sql, 30)({}, helpers);
    expect(await db.sql`select 1 from evidence_observations where video_id = ${video(2)}`).toHaveLength(0);
    expect((await db.sql`select count(*)::int from evidence_observations`)[0]!.count).toBe(before - 1);
  });
});
