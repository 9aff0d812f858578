import { ListObjectsV2Command, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../core/config.ts';
import { createFileStore } from '../../core/stenograms/fileStore.ts';
import { storeMarkerName } from '../../core/stenograms/fileStore.ts';
import { createS3Store } from '../../core/stenograms/s3Store.ts';
import { configuredStenogramStore, type StenogramStore } from '../../core/stenograms/store.ts';
import { startS3Server, type S3StandIn } from '../kit/servers/s3-server.ts';

/**
 * One suite, every store: the same documents, overwrites, deletes, listings and refused ids must
 * behave alike on the disk and in S3. S3 is s3rver (test/kit/servers/s3-server.ts) answering at most
 * two keys per listing page, so listing follows continuation tokens.
 */
interface Harness {
  store: StenogramStore;
  /** Every file or key anywhere in the scratch area (not only the store's), to see what a call wrote. */
  everything(): Promise<string[]>;
}

const markdown = '# Стенограмма — 日本語 ✓\n\n**[0:01] Speaker 1:** Ça va? 👋🏽 e\u0301\r\n\n> «quoted» ß\n';
const video = (n: number) => `vid${String(n).padStart(6, '0')}_-`;
const collect = async <T>(items: AsyncIterable<T>) => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const byKey = (a: { userId: string; videoId: string }, b: { userId: string; videoId: string }) =>
  `${a.userId}/${a.videoId}`.localeCompare(`${b.userId}/${b.videoId}`);

async function walk(dir: string, under = dir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    found.push(relative(under, path));
    if (entry.isDirectory()) found.push(...(await walk(path, under)));
  }
  return found.sort();
}

function conformance(name: string, open: () => Promise<Harness>) {
  describe(`stenogram store conformance: ${name}`, () => {
    let harness: Harness;
    let store: StenogramStore;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });

    it('gives back non-ASCII Markdown exactly, and nothing for a document never put', async () => {
      const user = randomUUID();
      await store.put(user, video(1), markdown);
      expect(await store.get(user, video(1))).toBe(markdown);
      expect(await store.get(user, video(2))).toBeUndefined();
      expect(await store.get(randomUUID(), video(1))).toBeUndefined();
    });

    it('replaces a document on a second put', async () => {
      const user = randomUUID();
      await store.put(user, video(1), 'first version, longer than the second');
      await store.put(user, video(1), 'second');
      expect(await store.get(user, video(1))).toBe('second');
      expect(await collect(store.list())).toHaveLength(1);
    });

    it('answers the UTF-8 size and SHA-256 of what it stored', async () => {
      const user = randomUUID();
      expect(await store.put(user, video(1), markdown)).toEqual({ bytes: Buffer.byteLength(markdown, 'utf8'), sha256: sha256(markdown) });
      expect(await store.put(user, video(2), '')).toEqual({
        bytes: 0,
        sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      });
      expect(sha256((await store.get(user, video(1)))!)).toBe(sha256(markdown));
    });

    it('deletes idempotently, leaving the other documents', async () => {
      const user = randomUUID();
      await store.delete(user, video(1));
      await store.put(user, video(1), 'one');
      await store.put(user, video(2), 'two');
      await store.delete(user, video(1));
      await store.delete(user, video(1));
      expect(await store.get(user, video(1))).toBeUndefined();
      expect(await store.get(user, video(2))).toBe('two');
      await store.delete(user, video(2));
      expect(await collect(store.list())).toEqual([]);
    });

    it('lists exactly what was put, with modification times', async () => {
      const before = Date.now();
      const users = [randomUUID(), randomUUID(), randomUUID()];
      const put = users.flatMap((userId, u) => [1, 2, 3].slice(0, u + 1).map((n) => ({ userId, videoId: video(n) })));
      for (const { userId, videoId } of put) await store.put(userId, videoId, `${userId} ${videoId}`);
      await store.delete(users[2]!, video(2));
      const expected = put.filter((d) => !(d.userId === users[2] && d.videoId === video(2))).sort(byKey);
      const listed = (await collect(store.list())).sort(byKey);
      expect(listed.map(({ userId, videoId }) => ({ userId, videoId }))).toEqual(expected);
      for (const { modifiedAt } of listed) {
        // S3 keeps whole seconds.
        expect(modifiedAt.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
        expect(modifiedAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
      }
    });

    it('takes a user id in any case as the one lower-case uuid', async () => {
      const user = randomUUID();
      await store.put(user.toUpperCase(), video(1), 'shouting');
      expect(await store.get(user, video(1))).toBe('shouting');
      expect((await collect(store.list())).map((d) => d.userId)).toEqual([user]);
    });

    it('refuses ids that are not a uuid and a video id, and writes nothing anywhere', async () => {
      const user = randomUUID();
      const badUsers = ['../x', '..%2f..%2fetc', '/etc/passwd', 'not-a-uuid', '', `${user}/..`, `${user}\n`, `../${user.slice(3)}`];
      const badVideos = [
        '../x',
        '..%2fabcdef',
        '/etc/passwd',
        'abc/def_ghi',
        'abc.def_ghi',
        '...........',
        'dQw4w9WgXc',
        `${video(1)}\n`,
        '',
      ];
      const attempts = [...badUsers.map((userId) => [userId, video(1)]), ...badVideos.map((videoId) => [user, videoId])] as [
        string,
        string,
      ][];
      const was = await harness.everything();
      for (const [userId, videoId] of attempts) {
        await expect(store.put(userId, videoId, 'escaped'), `put ${JSON.stringify([userId, videoId])}`).rejects.toThrow();
        await expect(store.get(userId, videoId), `get ${JSON.stringify([userId, videoId])}`).rejects.toThrow();
        await expect(store.delete(userId, videoId), `delete ${JSON.stringify([userId, videoId])}`).rejects.toThrow();
      }
      expect(await harness.everything()).toEqual(was);
      expect(await collect(store.list())).toEqual([]);
    });
  });
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'afterimage-stenograms-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let fileRuns = 0;
/** A fresh data folder per test; everything() walks the whole scratch folder around it. */
async function openFileStore() {
  const area = join(scratch, `file-${++fileRuns}`);
  await mkdir(area);
  const root = join(area, 'data', 'stenograms');
  return { root, store: createFileStore(root), everything: () => walk(area) };
}

conformance('file', openFileStore);

describe('file store', () => {
  it('is owner-only: 0700 folders, 0600 files', async () => {
    const { root, store } = await openFileStore();
    const user = randomUUID();
    await store.put(user, video(1), markdown);
    expect(store.location).toBe(`file:${root}`);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect((await stat(join(root, user))).mode & 0o777).toBe(0o700);
    expect((await stat(join(root, user, `${video(1)}.md`))).mode & 0o777).toBe(0o600);
    await store.delete(user, video(1));
    expect(await walk(root)).toEqual([storeMarkerName]);
    expect((await stat(join(root, storeMarkerName))).mode & 0o777).toBe(0o600);
  });

  it('never shows a write a crash cut short, and sweeps it once it is an hour old', async () => {
    const { root, store } = await openFileStore();
    const user = randomUUID();
    await store.put(user, video(1), 'whole');
    // What a crash between writing and renaming leaves: a temporary file beside (or instead of) the document.
    const halfOld = join(root, user, `.${video(1)}.md.0123abcd.tmp`);
    const halfNew = join(root, user, `.${video(2)}.md.4567cdef.tmp`);
    await writeFile(halfOld, 'who');
    await writeFile(halfNew, 'half a docu');
    expect(await store.get(user, video(1))).toBe('whole');
    expect(await store.get(user, video(2))).toBeUndefined();
    expect((await collect(store.list())).map((d) => d.videoId)).toEqual([video(1)]);
    // A recent temporary file may be a write in progress: kept. An hour-old one is a crash's: removed.
    expect(await walk(join(root, user))).toEqual([`.${video(1)}.md.0123abcd.tmp`, `.${video(2)}.md.4567cdef.tmp`, `${video(1)}.md`]);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(halfOld, twoHoursAgo, twoHoursAgo);
    await collect(store.list());
    expect(await walk(join(root, user))).toEqual([`.${video(2)}.md.4567cdef.tmp`, `${video(1)}.md`]);
  });

  it('leaves one whole version after concurrent puts of a document, and readers never see half of one', async () => {
    const { root, store } = await openFileStore();
    const user = randomUUID();
    const versions = Array.from({ length: 12 }, (_, i) => `# version ${i}\n\n${`${i} ✓ `.repeat(40_000)}`);
    const whole = new Set(versions);
    const reads: (string | undefined)[] = [];
    let writing = true;
    const reader = (async () => {
      while (writing) reads.push(await store.get(user, video(1)));
    })();
    const answers = await Promise.all(versions.map((text) => store.put(user, video(1), text)));
    writing = false;
    await reader;
    const final = (await store.get(user, video(1)))!;
    expect(whole.has(final)).toBe(true);
    expect(answers.map((a) => a.sha256)).toContain(sha256(final));
    expect(reads.filter((text) => text !== undefined && !whole.has(text))).toEqual([]);
    expect(await readdir(join(root, user))).toEqual([`${video(1)}.md`]);
  });

  it('keeps a put that races a delete emptying the user folder', async () => {
    const { store } = await openFileStore();
    const user = randomUUID();
    for (let round = 0; round < 30; round++) {
      await store.put(user, video(1), 'going');
      await Promise.all([store.delete(user, video(1)), store.put(user, video(2), `staying ${round}`)]);
      expect(await store.get(user, video(2))).toBe(`staying ${round}`);
      await store.delete(user, video(2));
    }
    expect(await collect(store.list())).toEqual([]);
  });
});

describe('file store root: writes only into a folder it knows as its own', () => {
  const refused = { name: 'StoreRootRefused', message: expect.stringMatching(/nothing was written.*mounted/) };

  it('marks the root it creates, and refuses once the marker is gone (an unmounted volume leaves an empty mount point)', async () => {
    const { root, store, everything } = await openFileStore();
    const user = randomUUID();
    await store.put(user, video(1), 'kept');
    const marker = JSON.parse(await readFile(join(root, storeMarkerName), 'utf8'));
    expect(marker).toMatchObject({ store: 'afterimage-stenograms', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await rename(root, `${root}-volume`);
    await mkdir(root);
    const before = await everything();
    await expect(store.put(user, video(2), 'lost')).rejects.toMatchObject(refused);
    expect(await everything()).toEqual(before);
    await rmdir(root);
    await rename(`${root}-volume`, root);
    await store.put(user, video(2), 'stored');
    expect(await store.get(user, video(2))).toBe('stored');
  });

  it('a new process refuses an empty root when stenograms were stored before, and makes a new store when none were', async () => {
    const { root, everything } = await openFileStore();
    await mkdir(root, { recursive: true });
    const before = await everything();
    const restarted = createFileStore(root, { storedBefore: async () => true });
    await expect(restarted.put(randomUUID(), video(1), 'lost')).rejects.toMatchObject({
      message: expect.stringMatching(/is empty.*stored before/),
    });
    expect(await everything()).toEqual(before);
    // A freshly formatted volume (lost+found) with nothing stored yet: a new store.
    await mkdir(join(root, 'lost+found'));
    await createFileStore(root, { storedBefore: async () => false }).put(randomUUID(), video(1), 'first');
    expect(await readdir(root)).toContain(storeMarkerName);
  });

  it('refuses a folder that holds anything but stenograms, and adopts one an older version filled', async () => {
    const { root, store, everything } = await openFileStore();
    await mkdir(join(root, 'backups'), { recursive: true });
    await writeFile(join(root, 'notes.txt'), 'not ours');
    const before = await everything();
    await expect(store.put(randomUUID(), video(1), 'lost')).rejects.toMatchObject(refused);
    expect(await everything()).toEqual(before);

    const older = await openFileStore();
    const user = randomUUID();
    await mkdir(join(older.root, user), { recursive: true });
    await writeFile(join(older.root, user, `${video(1)}.md`), 'from before markers');
    await older.store.put(user, video(2), 'after');
    expect((await readdir(older.root)).sort()).toEqual([storeMarkerName, user].sort());
    expect(await older.store.get(user, video(1))).toBe('from before markers');
    // Adopting needs documents: empty user folders alone are refused too.
    const hollow = await openFileStore();
    await mkdir(join(hollow.root, randomUUID()), { recursive: true });
    await expect(hollow.store.put(randomUUID(), video(1), 'lost')).rejects.toMatchObject(refused);
  });
});

describe('S3', () => {
  let s3: S3StandIn;
  let client: S3Client;
  let prefixes = 0;
  beforeAll(async () => {
    const directory = join(scratch, 's3rver');
    await mkdir(directory);
    s3 = await startS3Server({ directory, bucket: 'stenograms-test', maxKeysPerPage: 2 });
    client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  });
  afterAll(async () => {
    client?.destroy();
    await s3?.close();
  });

  const allKeys = async () => {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((object) => object.Key!));
      token = page.NextContinuationToken;
    } while (token);
    return keys.sort();
  };
  /** A fresh prefix per test, in the one bucket; everything() lists the whole bucket. */
  const openS3Store = async (prefix = `run-${++prefixes}/`) => ({
    prefix,
    store: createS3Store({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: s3.bucket,
      prefix,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    }),
    everything: allKeys,
  });

  conformance('s3', () => openS3Store());

  it('keeps documents under <prefix>stenograms/ as text/markdown, and names its location without credentials', async () => {
    const { store } = await openS3Store('nested/prefix');
    const user = randomUUID();
    await store.put(user, video(1), markdown);
    expect(store.location).toBe(`s3://${s3.bucket}/nested/prefix/`);
    expect((await allKeys()).filter((key) => key.startsWith('nested/'))).toEqual([`nested/prefix/stenograms/${user}/${video(1)}.md`]);
    const object = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `nested/prefix/stenograms/${user}/${video(1)}.md` }));
    expect(object.ContentType).toBe('text/markdown; charset=utf-8');
  });

  it('lists nothing but documents from under its prefix', async () => {
    const { prefix, store } = await openS3Store();
    const user = randomUUID();
    await store.put(user, video(1), 'kept');
    for (const key of [
      `${prefix}stenograms/${user}/notes.txt`,
      `${prefix}stenograms/not-a-uuid/${video(2)}.md`,
      `${prefix}other/${user}/${video(3)}.md`,
      `stenograms/${user}/${video(4)}.md`,
    ]) {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'stray' }));
    }
    expect((await collect(store.list())).map(({ userId, videoId }) => ({ userId, videoId }))).toEqual([
      { userId: user, videoId: video(1) },
    ]);
  });

  it('has an upload corrupted on the way refused by its SHA-256, keeping the old version', async () => {
    const { store } = await openS3Store();
    const user = randomUUID();
    await store.put(user, video(1), 'old');
    await s3.corruptNextPut();
    await expect(store.put(user, video(1), 'new')).rejects.toMatchObject({ name: 'BadDigest' });
    expect(await store.get(user, video(1))).toBe('old');
  });

  it('is what STENOGRAM_STORE=s3://… configures, path-style by default with S3_ENDPOINT', async () => {
    const config = loadConfig({
      STENOGRAM_STORE: `s3://${s3.bucket}/configured`,
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    const store = configuredStenogramStore(config);
    expect(store.location).toBe(`s3://${s3.bucket}/configured/`);
    const user = randomUUID();
    await store.put(user, video(1), markdown);
    expect(await store.get(user, video(1))).toBe(markdown);
    expect(await allKeys()).toContain(`configured/stenograms/${user}/${video(1)}.md`);
    expect(describeConfig(config)).toMatchObject({ S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: '****', S3_FORCE_PATH_STYLE: null });
  });
});

describe('configuredStenogramStore', () => {
  it('keeps files under DATA_DIR/stenograms by default', async () => {
    const dataDir = join(scratch, 'configured-data');
    const store = configuredStenogramStore(loadConfig({ DATA_DIR: dataDir }));
    expect(store.location).toBe(`file:${dataDir}/stenograms`);
    const user = randomUUID();
    await store.put(user, video(1), 'on disk');
    expect(await readFile(join(dataDir, 'stenograms', user, `${video(1)}.md`), 'utf8')).toBe('on disk');
  });

  it('refuses a store that is neither file nor s3://, and half a key pair', () => {
    for (const value of ['s3://', 'S3://bucket', 'ftp://host/x', 's3://Bucket/x', 'files']) {
      expect(() => loadConfig({ STENOGRAM_STORE: value }), value).toThrow(ConfigError);
    }
    expect(() => configuredStenogramStore(loadConfig({ STENOGRAM_STORE: 's3://bucket', S3_ACCESS_KEY_ID: 'AKIA' }))).toThrow(/set both/);
    expect(configuredStenogramStore(loadConfig({ STENOGRAM_STORE: 's3://bucket' })).location).toBe('s3://bucket/');
  });
});
