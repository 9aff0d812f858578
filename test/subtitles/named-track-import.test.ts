import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { parseJson, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { connectMcp, textOf } from '../mcp/support.ts';

// `afterimage import` of a folder where yt-dlp wrote a named track: the real CART captions of
// "Introducing GPT-4o" as `<base>.en-uYU-mmqFLq8.vtt` (language en, YouTube's track id uYU-mmqFLq8),
// beside an info.json listing it under `subtitles` as yt-dlp does. Every answer says en.
const VIDEO = 'DQacCB9tDaw';
const BASE = `Introducing GPT-4o [${VIDEO}]`;
const NAME = 'en-uYU-mmqFLq8';

let db: TestDatabase;
let dir: string;
let runtimeDir: string;
let api: TestApi;
let key: string;
let mcp: Client;

describeReal('a named track imported from a yt-dlp folder', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'afterimage-named-track-'));
    runtimeDir = await mkdtemp(join(tmpdir(), 'afterimage-runtime-'));
    // A real dump with this video's identity and the named track listed as yt-dlp lists it.
    const info = JSON.parse(await readFile(realFixture('peace/video_with_subs.json'), 'utf8'));
    Object.assign(info, {
      id: VIDEO,
      display_id: VIDEO,
      title: 'Introducing GPT-4o',
      webpage_url: `https://www.youtube.com/watch?v=${VIDEO}`,
      subtitles: { [NAME]: [{ ext: 'vtt', url: `https://www.youtube.com/api/timedtext?v=${VIDEO}&lang=en&fmt=vtt`, name: 'English' }] },
      automatic_captions: {},
      requested_subtitles: null,
    });
    await writeFile(join(dir, `${BASE}.info.json`), JSON.stringify(info));
    await copyFile(realFixture(`lattifai-benchmark/${VIDEO}.${NAME}.vtt`), join(dir, `${BASE}.${NAME}.vtt`));
    const imported = await runCommand(['import', dir, '--json'], { DATABASE_URL: db.url, XDG_RUNTIME_DIR: runtimeDir });
    expect(imported.code, imported.stderr).toBe(0);
    expect(parseJson(imported).subtitles).toMatchObject({ tracks: 1, newVersions: 1, problems: [] });
    api = await startTestApi(db.sql);
    ({ key } = await createKeyedUser(db.sql));
    mcp = await connectMcp(api.url, key);
  }, 120_000);

  afterAll(async () => {
    await mcp?.close();
    await api?.close();
    for (const path of [dir, runtimeDir]) if (path) await rm(path, { recursive: true, force: true });
    await db?.drop();
  });

  it('stores the language en and the track id apart', async () => {
    const tracks = await db.sql`select language, track_id as "trackId", kind, source from subtitle_tracks where video_id = ${VIDEO}`;
    expect(tracks).toEqual([{ language: 'en', trackId: 'uYU-mmqFLq8', kind: 'manual', source: 'archive' }]);
    const [video] = await db.sql`select caption_languages as captions from videos where video_id = ${VIDEO}`;
    expect(video!.captions).toEqual([{ language: 'en', kind: 'manual' }]);
  });

  it('downloads as en: X-Subtitle-Language, the file name, and the track listed with its id', async () => {
    const srt = await api.call(`/api/subtitles/${VIDEO}`, { key });
    expect(srt.status).toBe(200);
    expect(srt.headers.get('x-subtitle-language')).toBe('en');
    expect(srt.headers.get('content-disposition')).toBe(`attachment; filename="${VIDEO}.en.srt"`);
    expect(srt.body).toContain('MIRA MURATI');
    const status = await api.call(`/api/subtitles/${VIDEO}/status`, { key });
    expect(status.body.data.tracks).toEqual([
      expect.objectContaining({
        language: 'en',
        trackId: 'uYU-mmqFLq8',
        kind: 'manual',
        url: `/api/subtitles/${VIDEO}?lang=en&kind=manual&trackId=uYU-mmqFLq8`,
      }),
    ]);
    expect(status.body.data.transcript).toMatchObject({ state: 'completed', language: 'en' });
    const byUrl = await api.call(status.body.data.tracks[0].url, { key });
    expect(byUrl.status).toBe(200);
    expect((await api.call(`/api/subtitles/${VIDEO}?lang=${NAME}`, { key })).status).toBe(400);
    const other = await api.call(`/api/subtitles/${VIDEO}?lang=en&trackId=aaaaaaaaaaa`, { key });
    expect(other.status).toBe(404);
    expect(other.body.error.message).toContain('en (manual, track id uYU-mmqFLq8)');
  });

  it('names the zip entry and the manifest en', async () => {
    const response = await fetch(`${api.url}/api/subtitles/bulk-download`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ videoIds: [VIDEO], format: 'zip', lang: 'en' }),
    });
    expect(response.status).toBe(200);
    const files = unzipSync(new Uint8Array(await response.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual([`${VIDEO}.en.srt`, 'manifest.json']);
    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    expect(JSON.stringify(manifest)).not.toContain(NAME);
    expect(JSON.stringify(manifest)).toContain('"language":"en"');
  });

  it('answers en over MCP: the video, its subtitles', async () => {
    const video = await mcp.callTool({ name: 'get_video', arguments: { videoId: VIDEO } });
    expect((video.structuredContent as { captions: unknown }).captions).toEqual([{ language: 'en', kind: 'manual' }]);
    const subtitles = await mcp.callTool({ name: 'get_subtitles', arguments: { videoId: VIDEO } });
    expect((subtitles.structuredContent as { track: unknown }).track).toEqual({
      language: 'en',
      trackId: 'uYU-mmqFLq8',
      kind: 'manual',
      source: 'archive',
      version: 1,
    });
    expect(textOf(subtitles)).toContain('— en (manual) subtitles');
    expect(JSON.stringify(subtitles)).not.toContain(NAME);
  });
});
