import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle } from '../../core/evidence/verifyBundle.ts';
import { sha256Hex } from '../../core/status/keepObservations.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { startTimestampAuthority, type TimestampAuthority } from '../kit/servers/timestamp-authority.ts';
import { generatedVideoId } from '../kit/servers/youtube-api-server.ts';

const CHANNEL = 'UCtimestamptimestamptim1';
const videos = [generatedVideoId(CHANNEL, 0), generatedVideoId(CHANNEL, 1)];
let db: TestDatabase;
let authority: TimestampAuthority;
let stamped: TestApi;
let plain: TestApi;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  authority = await startTimestampAuthority();
  await db.sql.begin((tx) =>
    upsertVideos(
      tx,
      'youtube_api',
      videos.map((videoId, index) => ({ videoId, channelId: CHANNEL, title: `Stamped ${index}`, availability: 'live' as const })),
    ),
  );
  stamped = await startTestApi(db.sql, { TIMESTAMP_AUTHORITY_URL: authority.url });
  plain = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await stamped?.close();
  await plain?.close();
  await authority?.close();
  await db?.drop();
});

async function bundle(api: TestApi, videoId = videos[0]!) {
  const response = await fetch(`${api.url}/api/videos/${videoId}/evidence`, { headers: { 'X-API-Key': key } });
  expect(response.status).toBe(200);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { bytes, files: unzipSync(bytes) };
}
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes!).toString('utf8');

describe('RFC 3161 timestamps of evidence bundles', () => {
  it('asks the authority for a token over the manifest, adds it outside the manifest, and verify reports what it attests', async () => {
    const before = new Date();
    const first = await bundle(stamped);
    const second = await bundle(stamped);
    expect(authority.requests.slice(-2)).toEqual(['application/timestamp-query', 'application/timestamp-query']);
    expect(Object.keys(first.files).slice(-3)).toEqual(['manifest.json', 'README.txt', 'timestamp.tsr']);
    // The token is new each export; the manifest, and so its hash, is the same.
    expect(Buffer.from(second.files['timestamp.tsr']!).equals(Buffer.from(first.files['timestamp.tsr']!))).toBe(false);
    expect(sha256Hex(second.files['manifest.json']!)).toBe(sha256Hex(first.files['manifest.json']!));
    expect(JSON.parse(text(first.files['manifest.json'])).timestampAuthority).toBe(authority.url);
    expect(text(first.files['README.txt'])).toContain(
      `timestamp.tsr (SHA-256 ${sha256Hex(first.files['timestamp.tsr']!)}) is an RFC 3161 time-stamp token over the SHA-256 of manifest.json, signed by ${authority.signer}`,
    );

    const verdict = await verifyBundle(bufferBytes(first.bytes));
    expect(verdict).toMatchObject({ ok: true, problems: [], timestamp: { signer: authority.signer } });
    expect(Date.parse(verdict.timestamp!.attestedAt)).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(text(first.files['README.txt'])).toContain(`existed at ${verdict.timestamp!.attestedAt}`);

    // Without an authority the export stays as it was: no token, no field, byte-identical twice.
    const untimed = await bundle(plain);
    expect(untimed.files['timestamp.tsr']).toBeUndefined();
    expect(JSON.parse(text(untimed.files['manifest.json'])).timestampAuthority).toBeUndefined();
    expect(Buffer.from((await bundle(plain)).bytes).equals(Buffer.from(untimed.bytes))).toBe(true);
    expect(await verifyBundle(bufferBytes(untimed.bytes))).toMatchObject({ ok: true, timestamp: null });
  });

  it('fails naming timestamp.tsr when a byte of it changes or it attests another manifest', async () => {
    const { files } = await bundle(stamped);
    const token = files['timestamp.tsr']!;
    // Every part of it: the TSTInfo, the signature, the certificate.
    for (let at = 0; at < token.length; at += 29) {
      const changed = Uint8Array.from(token);
      changed[at] = changed[at]! ^ 0x01;
      const verdict = await verifyBundle(bufferBytes(zipSync({ ...files, 'timestamp.tsr': changed })));
      expect(verdict.ok, `byte ${at}`).toBe(false);
      expect(verdict.problems.map((problem) => problem.file)).toContain('timestamp.tsr');
    }
    const other = await bundle(stamped, videos[1]);
    const swapped = await verifyBundle(bufferBytes(zipSync({ ...files, 'timestamp.tsr': other.files['timestamp.tsr']! })));
    expect(swapped.problems).toContainEqual({
      file: 'timestamp.tsr',
      problem: 'timestamps another hash than the SHA-256 of manifest.json',
    });
    // A token in a bundle whose manifest names no authority is a file added.
    const untimed = (await bundle(plain)).files;
    const added = await verifyBundle(bufferBytes(zipSync({ ...untimed, 'timestamp.tsr': token })));
    expect(added.problems).toEqual([{ file: 'timestamp.tsr', problem: 'is not listed in manifest.json (added)' }]);
  });

  it('exports without a token when the authority fails, and says so in README.txt', async () => {
    authority.failWith(503);
    try {
      const { bytes, files } = await bundle(stamped);
      expect(files['timestamp.tsr']).toBeUndefined();
      expect(text(files['README.txt'])).toContain(
        'No timestamp: the time-stamping authority manifest.json names (timestampAuthority) gave none',
      );
      expect(await verifyBundle(bufferBytes(bytes))).toMatchObject({ ok: true, timestamp: null });
    } finally {
      authority.failWith(undefined);
    }
  });

  it('afterimage evidence verify prints the time the token attests', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'evidence-tsr-'));
    try {
      await writeFile(join(folder, 'stamped.zip'), (await bundle(stamped)).bytes);
      const run = await runCommand(['evidence', 'verify', join(folder, 'stamped.zip')]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^timestamped: \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z by ${authority.signer} \\(RFC 3161\\)$`, 'm'));
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
