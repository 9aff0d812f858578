import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { createFileStore } from '../../core/stenograms/fileStore.ts';
import { reconcileStenogramStore } from '../../core/stenograms/reconcileStore.ts';
import { createS3Store } from '../../core/stenograms/s3Store.ts';
import type { StenogramStore } from '../../core/stenograms/store.ts';
import { startS3Server, type S3StandIn } from '../kit/servers/s3-server.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';

/**
 * Reconciling against a store that is unmounted, lists nothing, lists part, or fails: every case must
 * leave every row unmarked and every file and orphan count as they were (the incident of issue 27
 * deleted 24 of 25 users' stenograms in one run).
 */
let db: TestDatabase;
let dir: string;
let s3: S3StandIn;
let proxy: Server;
/** What the proxy in front of the S3 stand-in does to ListObjectsV2: pass it, answer 500, list nothing, or list one row's key. */
let listing: 'pass' | 'error' | 'empty' | 'partial' = 'pass';
const silent = createLogger('silent');
const videos = Array.from({ length: 4 }, (_, i) => videoIdFor(`rf-${i}`));
const orphanVideo = videoIdFor('rf-orphan');
const users: string[] = [];

/** Forwards to the S3 stand-in unchanged (the Host header too, which the signature covers), altering listings as `listing` says. */
function startFaultProxy(upstream: string): Promise<Server> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const isListing = req.method === 'GET' && /[?&]list-type=2/.test(req.url ?? '');
    if (isListing && listing === 'error') {
      res
        .writeHead(500, { 'Content-Type': 'application/xml' })
        .end(
          '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>',
        );
      return;
    }
    const forwarded = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!isListing || listing === 'pass') {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let keep = listing === 'partial' ? 1 : 0;
          const xml = Buffer.concat(chunks)
            .toString('utf8')
            .replace(/<Contents>[\s\S]*?<\/Contents>/g, (contents) => (!contents.includes(orphanVideo) && keep-- > 0 ? contents : ''))
            .replace(/<IsTruncated>true<\/IsTruncated>/, '<IsTruncated>false</IsTruncated>')
            .replace(/<NextContinuationToken>[^<]*<\/NextContinuationToken>/, '');
          const { 'content-length': _length, ...headers } = answer.headers;
          res.writeHead(answer.statusCode ?? 502, headers).end(xml);
        });
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'afterimage-reconcile-fault-'));
  await addVideos(
    db.sql,
    channelIdFor('reconcile-fault'),
    [...videos, orphanVideo].map((videoId) => ({ videoId })),
  );
  for (let i = 0; i < videos.length; i++) users.push((await createKeyedUser(db.sql)).user.id);
  for (const [i, videoId] of videos.entries()) {
    await db.sql`
      insert into stenograms (owner_id, video_id, status, language, llm_model, bytes, content_sha256, generated_at)
      values (${users[i]!}::uuid, ${videoId}, 'generated', 'en', 'afterimage-stenogram-1', 1, ${'0'.repeat(64)}, now() - interval '2 hours')`;
  }
  s3 = await startS3Server({ directory: join(dir, 's3'), bucket: 'reconcile-fault', maxKeysPerPage: 2 });
  proxy = await startFaultProxy(s3.endpoint);
});

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await s3?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Every row's file and one orphan (seen in two runs, first three hours ago: the next good run removes it). */
async function populate(store: StenogramStore) {
  for (const [i, videoId] of videos.entries()) await store.put(users[i]!, videoId, `# ${videoId}\n`);
  await store.put(users[0]!, orphanVideo, '# orphan\n');
  await db.sql`delete from stenogram_orphans`;
  await db.sql`insert into stenogram_orphans (store, owner_id, video_id, first_seen_at, runs) values (${store.location}, ${users[0]!}::uuid, ${orphanVideo}, now() - interval '3 hours', 2)`;
}

/** What a run must not have changed. */
async function expectUntouched(store: StenogramStore) {
  const rows = await db.sql<{ marked: boolean }[]>`select file_missing_since is not null as marked from stenograms`;
  expect(rows).toHaveLength(videos.length);
  expect(rows.every((row) => !row.marked)).toBe(true);
  expect(await db.sql`select runs from stenogram_orphans`).toEqual([{ runs: 2 }]);
  for (const [i, videoId] of videos.entries()) expect(await store.get(users[i]!, videoId)).toBe(`# ${videoId}\n`);
  expect(await store.get(users[0]!, orphanVideo)).toBe('# orphan\n');
}

describe('reconcile_stenograms with a failing file store', () => {
  const root = () => join(dir, 'files');
  const store = () => createFileStore(root());
  const age = async () => {
    const old = new Date(Date.now() - 2 * 3600_000);
    for (const [i, videoId] of videos.entries()) await utimes(join(root(), users[i]!, `${videoId}.md`), old, old);
    await utimes(join(root(), users[0]!, `${orphanVideo}.md`), old, old);
  };

  it('unmounted (the root folder there but empty): refuses, marks and removes nothing', async () => {
    await populate(store());
    await age();
    await rename(root(), join(dir, 'mounted'));
    await mkdir(root());
    const outcome = await reconcileStenogramStore(db.sql, store(), silent);
    expect(outcome.refused).toMatch(/listed none of the 4/);
    await rm(root(), { recursive: true });
    await rename(join(dir, 'mounted'), root());
    await expectUntouched(store());
  });

  it('a listing error (the root is not a folder): the run fails and changes nothing', async () => {
    await rename(root(), join(dir, 'mounted'));
    await writeFile(root(), 'not a folder');
    await expect(reconcileStenogramStore(db.sql, store(), silent)).rejects.toMatchObject({ code: 'ENOTDIR' });
    await rm(root());
    await rename(join(dir, 'mounted'), root());
    await expectUntouched(store());
  });

  it('mounted again: the run goes ahead and removes the orphan only', async () => {
    expect(await reconcileStenogramStore(db.sql, store(), silent)).toEqual({
      rowsMarkedMissing: 0,
      rowsFoundAgain: 0,
      orphansWaiting: 0,
      orphanFilesRemoved: 1,
    });
    expect(await store().get(users[0]!, orphanVideo)).toBeUndefined();
  });
});

describe('reconcile_stenograms with a failing S3 store', () => {
  const store = () =>
    createS3Store({
      endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      region: 'us-east-1',
      bucket: s3.bucket,
      prefix: '',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    });
  // S3 sets LastModified itself, so the orphan here is young; the rows (two hours old) are what a bad listing endangers.
  beforeAll(async () => {
    listing = 'pass';
    await populate(store());
  });

  it.each([
    ['an empty listing', 'empty', /listed none of the 4/],
    ['a partial listing', 'partial', /listed only 1 of the 4/],
  ] as const)('%s: refuses, marks and removes nothing', async (_name, fault, reason) => {
    listing = fault;
    const outcome = await reconcileStenogramStore(db.sql, store(), silent);
    listing = 'pass';
    expect(outcome.refused).toMatch(reason);
    await expectUntouched(store());
  });

  it('a listing answered 500: the run fails and changes nothing', async () => {
    listing = 'error';
    const run = reconcileStenogramStore(db.sql, store(), silent);
    await expect(run).rejects.toMatchObject({ name: 'InternalError' });
    listing = 'pass';
    await expectUntouched(store());
  });
});
