import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { MANIFEST, README, readmeText } from '../../core/evidence/bundle.ts';
import { sha256Hex as sha256 } from '../../core/status/keepObservations.ts';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle } from '../../core/evidence/verifyBundle.ts';

const encode = (text: string) => new TextEncoder().encode(text);

/** A small bundle made as the exporter makes one: a file, its manifest and the README naming the manifest's hash. */
function bundle(files: Record<string, Uint8Array>, listed = files): Record<string, Uint8Array> {
  const manifest = encode(
    `${JSON.stringify({
      format: 'afterimage-evidence/1',
      subject: { kind: 'video', videoId: 'aaaaaaaaaaa' },
      files: Object.entries(listed).map(([path, bytes]) => ({ path, size: bytes.length, sha256: sha256(bytes), obtained: 'test' })),
    })}\n`,
  );
  return { ...files, [MANIFEST]: manifest, [README]: encode(readmeText(sha256(manifest))) };
}

/** Sets the 4-byte little-endian number at `at`. */
const setU32 = (bytes: Uint8Array, at: number, value: number) => new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, value, true);
/** Where the central directory's first entry starts. */
const directoryStart = (zip: Uint8Array) => new DataView(zip.buffer, zip.byteOffset).getUint32(zip.length - 22 + 16, true);

describe('verifying hostile bundles, in memory', () => {
  it('accepts a well-made bundle', async () => {
    const zip = zipSync(bundle({ 'video.json': encode('{}\n') }));
    expect(await verifyBundle(bufferBytes(zip))).toMatchObject({ ok: true, problems: [] });
  });

  it('reports path-traversal and absolute names without reading them', async () => {
    for (const name of ['../escape.txt', 'a/../../b.json', '/etc/passwd', 'C:/x.txt', 'a\\b.txt']) {
      const files = bundle({ 'video.json': encode('{}') });
      files[name] = encode('x');
      const verdict = await verifyBundle(bufferBytes(zipSync(files)));
      expect(verdict.ok, name).toBe(false);
      expect(verdict.problems, name).toContainEqual({ file: name, problem: expect.stringMatching(/^its name .*: not read$/) });
    }
  });

  it('stops a ZIP bomb: a high ratio, and a total past the cap', async () => {
    const zeros = new Uint8Array(20 * 1024 * 1024);
    const ratio = await verifyBundle(bufferBytes(zipSync(bundle({ 'video.json': zeros }), { level: 9 })));
    expect(ratio.problems).toContainEqual({ file: 'video.json', problem: expect.stringMatching(/possible ZIP bomb/) });
    const capped = await verifyBundle(bufferBytes(zipSync(bundle({ 'a.json': zeros.subarray(0, 4096) }), { level: 0 })), {
      maxTotalBytes: 1000,
      maxRatio: 1000,
      maxEntries: 10,
    });
    expect(capped.problems).toContainEqual({ file: 'a.json', problem: expect.stringMatching(/past 1000 uncompressed bytes/) });
  });

  it('reports a size the ZIP lies about, and a manifest that lies about one', async () => {
    const zip = zipSync(bundle({ 'video.json': encode('{"a":1}\n') }), { level: 0 });
    // The central directory's uncompressed size of the first entry (video.json): one byte fewer than it holds.
    const at = directoryStart(zip);
    const lying = Uint8Array.from(zip);
    setU32(lying, at + 24, 7);
    const verdict = await verifyBundle(bufferBytes(lying));
    expect(verdict.problems).toContainEqual({ file: 'video.json', problem: expect.stringMatching(/more than the 7 bytes the ZIP says/) });

    const files = { 'video.json': encode('{"a":1}\n') };
    const manifestLies = bundle(files, { 'video.json': encode('{"a":1}\n   ') });
    const told = await verifyBundle(bufferBytes(zipSync(manifestLies)));
    expect(told.problems).toEqual([{ file: 'video.json', problem: 'has 8 bytes; manifest.json says 11' }]);
  });

  it('reports a truncated bundle and a truncated file', async () => {
    const zip = zipSync(bundle({ 'video.json': encode('{"a":1}\n'.repeat(100)) }), { level: 0 });
    const cut = await verifyBundle(bufferBytes(zip.subarray(0, Math.floor(zip.length / 2))));
    expect(cut).toMatchObject({ ok: false, problems: [{ file: '(the bundle)', problem: expect.stringMatching(/truncated/) }] });
    // The directory kept, the first file's bytes said to run past the start of the directory.
    const at = directoryStart(zip);
    const short = Uint8Array.from(zip);
    setU32(short, at + 20, 100_000);
    setU32(short, at + 24, 100_000);
    const verdict = await verifyBundle(bufferBytes(short));
    expect(verdict.problems).toContainEqual({ file: 'video.json', problem: expect.stringMatching(/is truncated/) });
  });

  it('reports a raw body that does not decompress to its record, and an inconsistent history', async () => {
    const { gzipSync } = await import('node:zlib');
    const body = encode('the answer');
    const record = encode(JSON.stringify({ bodySha256: sha256(encode('another answer')), bodySize: 14 }));
    const history = encode(
      JSON.stringify({
        history: [
          { status: 'live', previousStatus: null },
          { status: 'deleted', previousStatus: 'private' },
        ],
      }),
    );
    const verdict = await verifyBundle(
      bufferBytes(
        zipSync(bundle({ 'observations/1.json': record, 'observations/1.body.gz': gzipSync(body), 'status-history.json': history })),
      ),
    );
    expect(verdict.problems).toEqual([
      { file: 'observations/1.body.gz', problem: 'does not decompress to the body observations/1.json records (SHA-256 and size)' },
      { file: 'status-history.json', problem: 'entry 2 says it followed private, but the entry before is live' },
    ]);
  });
});
