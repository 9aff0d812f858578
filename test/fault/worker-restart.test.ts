import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from '../../core/db/database.ts';
import { embeddedUrl } from '../../core/db/embedded.ts';
import { processAlive } from '../../core/processAlive.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { answerOf, msUntil, signalPostmaster } from '../kit/databaseOutage.ts';
import { eventually, freePort, killService, postmasterPid, runCli, startService, temporaryDataDir, type Service } from '../support/cli.ts';
import { readStream } from '../support/sse.ts';

// kill -9 of the embedded postmaster under a real `afterimage api` and a real `afterimage worker` on
// the embedded defaults, as the operator would run them: nobody restarts the cluster by hand. The
// services restart it, the worker survives and finishes the crawl it was running, and `afterimage
// migrate`, the operator's obvious next step, never stops the cluster under them.

let dataDir: { dir: string; remove(): Promise<void> };
let archive: ArchiveFixture;
let api: Service;
let worker: Service;
let base = '';
let key = '';
/** The registry of running services (core/db/runningServices.ts), this test's own. */
let registry = '';
let env: Record<string, string> = {};

const serving = async () =>
  (await answerOf(`${base}/api/health`)).status === 200 && (await answerOf(`${base}/api/features`, { 'X-API-Key': key })).status === 200;
const lines = (service: Service, msg: string) =>
  service
    .stderr()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`));

beforeAll(async () => {
  [dataDir, archive] = await Promise.all([
    temporaryDataDir(),
    createArchiveFixture({
      videos: 4_000,
      seed: 'fault-worker-restart',
      formats: 1,
      mediaEvery: 0,
      subtitlesEvery: 0,
      legacyChannel: false,
    }),
  ]);
  registry = join(dataDir.dir, 'xdg-runtime');
  await mkdir(registry, { recursive: true, mode: 0o700 });
  const port = await freePort();
  env = { DATA_DIR: dataDir.dir, ARCHIVE_DIR: archive.dir, XDG_RUNTIME_DIR: registry, LOG_LEVEL: 'info' };
  api = startService(['api'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
  key = (await api.waitForStdout(/\n\s+(tsk_[A-Za-z0-9]{48})\n/, 60_000))[1]!;
  await api.waitForStderr(/"msg":"afterimage ready"/, 60_000);
  worker = startService(['worker'], env);
  await worker.waitForStderr(/"msg":"afterimage ready"/, 60_000);
  base = `http://127.0.0.1:${port}`;
}, 120_000);

afterAll(async () => {
  await killService(worker);
  await killService(api);
  await archive?.cleanup();
  await dataDir?.remove();
}, 90_000);

beforeEach(({ onTestFailed }) =>
  onTestFailed(() => {
    for (const [name, service] of [
      ['api', api],
      ['worker', worker],
    ] as const) {
      console.log(
        `--- ${name} (exit ${service.child.exitCode ?? service.child.signalCode})\n${service
          .stderr()
          .split('\n')
          .filter((line) => !line.includes('"msg":"request"') && !line.includes('"msg":"migration applied"'))
          .join('\n')}`,
      );
    }
  }),
);

describe('kill -9 of the embedded postmaster under a running api and worker', () => {
  it('the services restart the cluster, and the worker survives and finishes the crawl running at the kill: each video stored and streamed once', async () => {
    const started = await fetch(`${base}/api/search`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: archive.handle }),
    });
    expect(started.status).toBe(200);
    const { sseEndpointUrl } = ((await started.json()) as { data: { sseEndpointUrl: string } }).data;
    const reading = readStream(`${base}${sseEndpointUrl}`, { key, timeoutMs: 60_000 });

    const sql = connect(embeddedUrl(dataDir.dir), { max: 1, role: 'test' });
    const stored = await eventually(async () => {
      const [crawl] = await sql<
        { status: string; videos: number }[]
      >`select status, (select count(*)::int from videos) as videos from crawls order by started_at desc limit 1`;
      return crawl && crawl.videos > 0 ? crawl : undefined;
    }, 'the first stored batch').finally(() => sql.end({ timeout: 0 }));
    const oldPostmaster = signalPostmaster(dataDir.dir, 'SIGKILL');
    expect(stored.status, 'the crawl must still run when the database is killed').toBe('running');

    // Nobody but the services starts the cluster again.
    const toServing = await msUntil(serving, '200 from the API without an operator', 45_000);
    expect(postmasterPid(dataDir.dir)).not.toBe(oldPostmaster);

    const { events } = await reading;
    expect(events.at(-1)?.event).toBe('search:complete');
    const streamed = events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId as string);
    expect(new Set(streamed).size, 'a video streamed twice').toBe(streamed.length);
    expect([...streamed].sort()).toEqual([...archive.allVideoIds].sort());
    const check = connect(embeddedUrl(dataDir.dir), { max: 1, role: 'test' });
    try {
      const [row] = await check<{ videos: number; duplicates: number }[]>`
        select (select count(*)::int from videos) as videos,
               (select count(*)::int from (select 1 from events where type = 'search:video' group by payload->>'videoId' having count(*) > 1) as twice) as duplicates`;
      expect(row).toEqual({ videos: archive.allVideoIds.length, duplicates: 0 });
    } finally {
      await check.end({ timeout: 0 });
    }

    expect(worker.child.exitCode, 'the worker exited').toBeNull();
    expect(api.child.exitCode, 'the API exited').toBeNull();
    // Each process says once that the database is gone, however many of its connections noticed.
    expect(lines(worker, 'database unreachable: requests fail fast until a probe connects')).toHaveLength(1);
    const errors = worker
      .stderr()
      .split('\n')
      .filter(
        (line) =>
          line.includes('"level":"error"') && !line.includes('"msg":"Failed task ') && !line.includes('"msg":"Failed to fail jobs '),
      );
    expect(errors, "graphile-worker's reports of each lost connection, not at debug").toEqual([]);
    console.log(`worker-restart: 200 again ${toServing} ms after kill -9, no operator`);
  }, 90_000);

  it('`afterimage migrate` while the cluster is dead and the services hold no connection starts it and leaves it running for them; a registration of a gone process is removed', async () => {
    await msUntil(serving, 'a serving API', 30_000);
    const staleFile = join(registry, 'afterimage', 'services', '999999999.json');
    await writeFile(
      staleFile,
      JSON.stringify({
        pid: 999_999_999,
        role: 'worker',
        startedAt: new Date().toISOString(),
        database: { embedded: true, location: dataDir.dir },
      }),
    );
    const oldPostmaster = signalPostmaster(dataDir.dir, 'SIGKILL');
    // Frozen, the services neither restart the cluster nor connect to it: only their registrations say they use it.
    for (const service of [api, worker]) service.child.kill('SIGSTOP');
    try {
      await msUntil(async () => !processAlive(oldPostmaster), 'exit of the old postmaster', 30_000);
      const migrated = await runCli(['migrate'], env);
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(postmasterPid(dataDir.dir), 'migrate stopped the cluster the services use').toBeDefined();
      expect(await readdir(join(registry, 'afterimage', 'services'))).not.toContain('999999999.json');
    } finally {
      for (const service of [api, worker]) service.child.kill('SIGCONT');
    }
    await msUntil(serving, '200 from the API again', 30_000);
  }, 90_000);
});
